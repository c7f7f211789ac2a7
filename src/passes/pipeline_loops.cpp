#include "passes/pipeline_loops.h"

#include <set>

#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

// for r in range(program_id(a), hi, num_programs(a)).
bool grid_stride(const ir::Function &f, const ir::Op &begin) {
    const ir::Op &lo = f.def(begin.operands[0]), &step = f.def(begin.operands[2]);
    return lo.kind == OpKind::ProgramId && step.kind == OpKind::NumPrograms && lo.axis == step.axis;
}

// Why loop l may not be pipelined ("" when it may): see pipeline_loops.h.
std::string refusal(const ir::Function &f, const ir::Loop &l, const std::set<std::string> &writes) {
    if (!grid_stride(f, f.ops[static_cast<size_t>(l.begin)])) return "not a loop over programs";
    std::vector<bool> carried(f.values.size(), false);  // depends on a value the loop carries
    bool prefetchable = false;
    for (int i = l.begin + 1; i < l.end; ++i) {
        const ir::Op &op = f.ops[static_cast<size_t>(i)];
        if (op.kind == OpKind::Dot) return op_at(f, i) + " in its body (pipelined at the kernel's num_stages)";
        if (op.kind == OpKind::ForBegin) return op_at(f, i) + " in its body";
        bool dep = op.kind == OpKind::LoopArg;
        for (ValueId v : op.operands) dep = dep || carried[v];
        if (op.result != ir::kNoValue) carried[op.result] = dep;
        if (op.kind != OpKind::Load) continue;
        if (writes.count(pointer_base(f, op.operands[0]))) return op_at(f, i) + " reads a buffer the kernel writes";
        // Triton pipelines tile loads only (pipeline_loops.h): a scalar's load is not prefetched.
        prefetchable = prefetchable || (!carried[op.operands[0]] && !f.type(op.result).scalar());
    }
    return prefetchable ? "" : "no load at an address it can compute ahead";
}

}  // namespace

PipelinedLoops pipeline_loops(const ir::Function &f) {
    PipelinedLoops out{f, {}, ""};
    if (f.param_index(kLoopStages) >= 0) return out.why = std::string("a parameter is named ") + kLoopStages, out;
    for (const ir::Constexpr &c : f.constexprs)
        if (c.name == kLoopStages) return out.why = std::string("a constexpr is named ") + kLoopStages, out;
    const std::set<std::string> writes = written_buffers(f);
    for (const ir::Loop &l : ir::loops(f)) {
        const std::string why = refusal(f, l, writes);
        if (why.empty()) {
            out.fn.ops[static_cast<size_t>(l.begin)].name = "tl.range";
            out.fn.ops[static_cast<size_t>(l.begin)].ival = 1;
            out.loops.push_back(l.begin);
        } else if (out.why.empty()) {
            out.why = op_at(f, l.begin) + ": " + why;
        }
    }
    if (out.why.empty() && out.loops.empty()) out.why = "no loop";
    return out;
}

bool has_pipelined_loop(const ir::Function &f) {
    for (const ir::Op &op : f.ops)
        if (op.kind == OpKind::ForBegin && op.ival) return true;
    return false;
}

std::string print(const PipelinedLoops &p) {
    if (p.loops.empty()) return "no loop pipelined: " + p.why + "\n";
    std::string out;
    for (int i : p.loops) {  // a re-grid's loop has no place in the source: name it by its axis
        const int axis = p.fn.def(p.fn.ops[static_cast<size_t>(i)].operands[0]).axis;
        out += "the loop over the programs of axis " + std::to_string(axis) + " pipelined (its loads prefetched " +
               kLoopStages + " - 1 iterations ahead)\n";
    }
    return out;
}

}  // namespace tad::passes

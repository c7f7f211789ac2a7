#include "passes/split_scatter.h"

#include "passes/affine.h"
#include "passes/passes.h"

namespace tad::passes {

namespace {

bool writes(const ir::Op &op) { return op.kind == ir::OpKind::Store || op.kind == ir::OpKind::AtomicAdd; }

// A buffer the kernel both reads and writes: its reads would depend on which writes ran.
std::string reads_what_it_writes(const ir::Function &f) {
    const MemoryParams m = memory_params(f);
    for (const Access &a : m.accesses)
        if (a.kind == ir::OpKind::Load && (m.stored.count(a.param) || m.accumulated.count(a.param)))
            return "it reads " + a.param + ", which it writes (" + op_at(f, a.op) + ")";
    return "";
}

}  // namespace

std::vector<bool> scattered_writes(const ir::Function &f, const std::set<std::string> &params) {
    Affine a(f);
    std::vector<bool> out(f.ops.size(), false);
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        out[i] = writes(op) && params.count(pointer_base(f, op.operands[0])) && a.of(op.operands[0]).data >= 0;
    }
    return out;
}

ScatterSplit split_scatter(const ir::Function &f, const std::set<std::string> &params) {
    ScatterSplit out;
    out.why = reads_what_it_writes(f);
    if (!out.why.empty()) return out;
    const std::vector<bool> scattered = scattered_writes(f, params);
    std::set<std::string> found;
    for (size_t i = 0; i < f.ops.size(); ++i)
        if (scattered[i]) found.insert(pointer_base(f, f.ops[i].operands[0]));
    for (const std::string &p : params)
        if (!found.count(p)) return out.why = "no write of " + p + " has a data-dependent address", out;
    std::vector<ir::ValueId> same(f.values.size());
    for (size_t v = 0; v < same.size(); ++v) same[v] = static_cast<ir::ValueId>(v);
    std::vector<bool> keep_rest(f.ops.size()), keep_scatter(f.ops.size());
    for (size_t i = 0; i < f.ops.size(); ++i) {
        keep_rest[i] = !scattered[i];
        keep_scatter[i] = !writes(f.ops[i]) || scattered[i];
    }
    out.rest = compact(f, keep_rest, same);
    out.scatter = compact(f, keep_scatter, same);
    out.scatter.name = f.name + "_scatter";
    for (ir::Op &op : out.scatter.ops)
        if (op.kind == ir::OpKind::Store) {
            op.kind = ir::OpKind::AtomicAdd;
            op.name = "relaxed";
        }
    return out;
}

}  // namespace tad::passes

#include "passes/passes.h"
#include "support/error.h"

namespace tad::passes {

namespace {

// What a loop-carried pointer yields back to itself adds no base: "self" stands for it while its
// loop_arg is being resolved. No parameter has this name.
const std::string kSelf = "\x01self";

std::string base_of(const ir::Function &f, const std::vector<ir::Loop> &loops, ir::ValueId p,
                    std::set<ir::ValueId> &open) {
    const ir::Op &op = f.def(p);
    switch (op.kind) {
    case ir::OpKind::Param: return op.name;
    case ir::OpKind::Broadcast:
    case ir::OpKind::AddPtr:
    case ir::OpKind::ExpandDims: return base_of(f, loops, op.operands[0], open);
    case ir::OpKind::Where: {  // tl.where between two pointers into one buffer
        std::string a = base_of(f, loops, op.operands[1], open), b = base_of(f, loops, op.operands[2], open);
        return a == kSelf ? b : b == kSelf || a == b ? a : "";
    }
    case ir::OpKind::LoopArg:
    case ir::OpKind::LoopResult: {  // the initial value's buffer, which every iteration must keep
        const int at = f.values.at(p).def_op;
        for (const ir::Loop &l : loops)
            for (size_t k = 0; k < l.args.size(); ++k) {
                if (l.args[k] != at && l.results[k] != at) continue;
                ir::ValueId arg = f.ops[static_cast<size_t>(l.args[k])].result;
                if (open.count(arg)) return kSelf;
                open.insert(arg);
                std::string init = base_of(f, loops, f.ops[static_cast<size_t>(l.args[k])].operands[0], open);
                std::string next = base_of(f, loops, f.ops[static_cast<size_t>(l.end)].operands[k], open);
                open.erase(arg);
                return next == kSelf || next == init ? init : "";
            }
        return "";
    }
    default: return "";
    }
}

std::string base_in(const ir::Function &f, const std::vector<ir::Loop> &loops, ir::ValueId p) {
    std::set<ir::ValueId> open;
    std::string base = base_of(f, loops, p, open);
    return base == kSelf ? "" : base;
}

}  // namespace

std::string pointer_base(const ir::Function &f, ir::ValueId p) { return base_in(f, ir::loops(f), p); }

std::set<std::string> written_buffers(const ir::Function &f) {
    std::set<std::string> out;
    for (const ir::Op &op : f.ops)
        if (op.kind == ir::OpKind::Store || op.kind == ir::OpKind::AtomicAdd)
            out.insert(pointer_base(f, op.operands[0]));
    return out;
}

MemoryParams memory_params(const ir::Function &f) {
    MemoryParams m;
    std::vector<ir::Loop> loops = ir::loops(f);
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (op.kind != ir::OpKind::Load && op.kind != ir::OpKind::Store && op.kind != ir::OpKind::AtomicAdd) continue;
        std::string base = base_in(f, loops, op.operands[0]);
        // An access whose buffer is unknown would take no part in differentiation: refuse it.
        if (base.empty())
            fail(TAD_ERR_UNSUPPORTED,
                 where(f.source_path, op.loc.line, op.loc.col) + ": unsupported construct '" + ir::op_name(op.kind) +
                     "' through a pointer computed by '" + ir::op_name(f.def(op.operands[0]).kind) +
                     "'; tad follows a pointer into one kernel parameter through +, broadcasts, tl.where "
                     "between two pointers into it, and loops that keep it in that buffer");
        Access a{static_cast<int>(i), op.kind, base, op.operands[0]};
        for (size_t l = 0; l < loops.size(); ++l)  // loops come outermost first: the last match is innermost
            if (loops[l].begin < a.op && a.op < loops[l].end) a.loop = static_cast<int>(l);
        m.accesses.push_back(a);
        if (op.kind == ir::OpKind::Load) {
            m.loaded.insert(base);
        } else {
            m.stored.insert(base);
            (op.kind == ir::OpKind::AtomicAdd ? m.accumulated : m.overwritten).insert(base);
        }
    }
    return m;
}

}  // namespace tad::passes

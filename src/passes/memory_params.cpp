#include "passes/passes.h"

namespace tad::passes {

std::string pointer_base(const ir::Function &f, ir::ValueId p) {
    for (;;) {
        const ir::Op &op = f.def(p);
        switch (op.kind) {
        case ir::OpKind::Param: return op.name;
        case ir::OpKind::Broadcast:
        case ir::OpKind::AddPtr:
        case ir::OpKind::ExpandDims:
        case ir::OpKind::LoopArg: p = op.operands[0]; break;
        default: return "";
        }
    }
}

namespace {

// Whether value v changes between iterations of loop l: it is l's own loop argument or iterator, or
// it is computed inside l from such a value.
bool varies_in(const ir::Function &f, const ir::Loop &l, ir::ValueId v, std::map<ir::ValueId, bool> &memo) {
    auto it = memo.find(v);
    if (it != memo.end()) return it->second;
    int def = -1;
    for (size_t i = static_cast<size_t>(l.begin); i <= static_cast<size_t>(l.end) && def < 0; ++i)
        if (f.ops[i].result == v) def = static_cast<int>(i);
    bool r = false;
    if (def >= 0) {
        const ir::Op &op = f.ops[static_cast<size_t>(def)];
        r = op.kind == ir::OpKind::ForBegin || op.kind == ir::OpKind::LoopArg;
        for (ir::ValueId o : op.operands) r = r || varies_in(f, l, o, memo);
    }
    return memo[v] = r;
}

}  // namespace

MemoryParams memory_params(const ir::Function &f) {
    MemoryParams m;
    std::vector<ir::Loop> loops = ir::loops(f);
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (op.kind != ir::OpKind::Load && op.kind != ir::OpKind::Store && op.kind != ir::OpKind::AtomicAdd) continue;
        std::string base = pointer_base(f, op.operands[0]);
        if (base.empty()) continue;
        Access a{static_cast<int>(i), op.kind, base, op.operands[0]};
        for (size_t l = 0; l < loops.size(); ++l)  // loops come outermost first: the last match is innermost
            if (loops[l].begin < a.op && a.op < loops[l].end) a.loop = static_cast<int>(l);
        if (a.loop >= 0) {
            std::map<ir::ValueId, bool> memo;
            a.varies = varies_in(f, loops[static_cast<size_t>(a.loop)], a.ptr, memo);
        }
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

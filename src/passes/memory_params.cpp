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

MemoryParams memory_params(const ir::Function &f) {
    MemoryParams m;
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const ir::Op &op = f.ops[i];
        if (op.kind != ir::OpKind::Load && op.kind != ir::OpKind::Store && op.kind != ir::OpKind::AtomicAdd) continue;
        std::string base = pointer_base(f, op.operands[0]);
        if (base.empty()) continue;
        if (op.kind == ir::OpKind::Load) {
            m.loaded.insert(base);
            if (m.overwritten.count(base)) m.reread.emplace(base, static_cast<int>(i));
        } else {
            m.stored.insert(base);
            (op.kind == ir::OpKind::AtomicAdd ? m.accumulated : m.overwritten).insert(base);
        }
    }
    return m;
}

}  // namespace tad::passes

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
    for (const ir::Op &op : f.ops) {
        if (op.kind == ir::OpKind::Load) m.loaded.insert(pointer_base(f, op.operands[0]));
        if (op.kind == ir::OpKind::Store || op.kind == ir::OpKind::AtomicAdd) m.stored.insert(pointer_base(f, op.operands[0]));
        if (op.kind == ir::OpKind::AtomicAdd) m.accumulated.insert(pointer_base(f, op.operands[0]));
    }
    m.loaded.erase("");
    m.stored.erase("");
    m.accumulated.erase("");
    return m;
}

}  // namespace tad::passes

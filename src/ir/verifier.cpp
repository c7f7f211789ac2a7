#include "ir/ir.h"

namespace tad::ir {

namespace {
bool elementwise(OpKind k) {
    return (k >= OpKind::Add && k <= OpKind::Ceil) || k == OpKind::Where || k == OpKind::Cast ||
           k == OpKind::AddPtr;
}
}  // namespace

std::string verify(const Function &f) {
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const Op &op = f.ops[i];
        std::string at = "op " + std::to_string(i) + " (" + op_name(op.kind) + ")";
        for (ValueId v : op.operands) {
            if (v < 0 || v >= static_cast<ValueId>(f.values.size())) return at + ": bad operand";
            if (f.values[v].def_op >= static_cast<int>(i)) return at + ": operand %" + std::to_string(v) + " used before definition";
        }
        if (elementwise(op.kind)) {
            const Type &r = f.type(op.result);
            for (ValueId v : op.operands)
                if (!f.type(v).same_shape(r)) return at + ": operand shape " + f.type(v).str() + " differs from result " + r.str();
        }
        switch (op.kind) {
        case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Mod:
        case OpKind::Maximum: case OpKind::Minimum:
            if (f.type(op.operands[0]).elem != f.type(op.operands[1]).elem)
                return at + ": operand element types differ";
            break;
        case OpKind::Where:
            if (f.type(op.operands[0]).elem != DType::I1) return at + ": condition is not i1";
            break;
        case OpKind::AddPtr:
            if (!f.type(op.operands[0]).is_ptr || f.type(op.operands[1]).is_float()) return at + ": needs pointer + integer";
            break;
        case OpKind::Load:
        case OpKind::Store:
        case OpKind::AtomicAdd: {
            const Type &p = f.type(op.operands[0]);
            if (!p.is_ptr) return at + ": address is not a pointer";
            if (op.kind != OpKind::Load) {
                const Type &v = f.type(op.operands[1]);
                if (v.elem != p.elem || !v.same_shape(p)) return at + ": value " + v.str() + " does not match " + p.str();
            }
            break;
        }
        default: break;
        }
    }
    return "";
}

}  // namespace tad::ir

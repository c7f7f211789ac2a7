// The op table (ops.def) as data.
#include "ir/ir.h"

namespace tad::ir {

const std::vector<OpInfo> &op_table() {
    // clang-format off
#define CALL(fn) Spelling{Spelling::Call, fn, fn, 100}
#define INFIX(op, prec) Spelling{Spelling::Infix, op, op, prec}
#define INFIX_BY_TYPE(float_op, int_op, prec) Spelling{Spelling::Infix, float_op, int_op, prec}
#define PREFIX(op) Spelling{Spelling::Prefix, op, op, 80}
#define REDUCE(fn) Spelling{Spelling::Reduce, fn, fn, 100}
#define CUSTOM Spelling{}
#define LANE(expr) true
#define NO_LANE false
#define TAD_OP(kind, name, cls, attrs, spelling) \
    OpInfo{OpKind::kind, name, OpClass::cls, OpAttrs::attrs, spelling, false, false, ""},
#define TAD_UNARY(kind, name, spelling, float_lane, int_lane, tl_name) \
    OpInfo{OpKind::kind, name, OpClass::Unary, OpAttrs::None, spelling, float_lane, int_lane, tl_name},
#define TAD_BINARY(kind, name, cls, spelling, float_lane, int_lane) \
    OpInfo{OpKind::kind, name, OpClass::cls, OpAttrs::None, spelling, float_lane, int_lane, ""},
    // clang-format on
    static const std::vector<OpInfo> table = {
#include "ir/ops.def"
    };
    return table;
}

const OpInfo &op_info(OpKind k) { return op_table().at(static_cast<size_t>(k)); }

const char *op_name(OpKind k) {
    const std::vector<OpInfo> &t = op_table();
    const auto i = static_cast<size_t>(k);
    return i < t.size() ? t[i].name : "?";
}

bool is_elementwise(OpKind k) {
    switch (op_info(k).cls) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Logical:
    case OpClass::Elementwise: return true;
    default: return false;
    }
}

}  // namespace tad::ir

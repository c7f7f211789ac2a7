#include <cstdio>
#include <sstream>

#include "ir/ir.h"

namespace tad::ir {

const char *op_name(OpKind k) {
    switch (k) {
    case OpKind::Param: return "param";
    case OpKind::Const: return "const";
    case OpKind::ProgramId: return "program_id";
    case OpKind::NumPrograms: return "num_programs";
    case OpKind::Arange: return "arange";
    case OpKind::Broadcast: return "broadcast";
    case OpKind::ExpandDims: return "expand_dims";
    case OpKind::Trans: return "trans";
    case OpKind::Reshape: return "reshape";
    case OpKind::Join: return "join";
    case OpKind::Split: return "split";
    case OpKind::Dot: return "dot";
    case OpKind::Add: return "add";
    case OpKind::Sub: return "sub";
    case OpKind::Mul: return "mul";
    case OpKind::Div: return "div";
    case OpKind::Mod: return "mod";
    case OpKind::Maximum: return "maximum";
    case OpKind::Minimum: return "minimum";
    case OpKind::Pow: return "pow";
    case OpKind::Lt: return "lt";
    case OpKind::Le: return "le";
    case OpKind::Gt: return "gt";
    case OpKind::Ge: return "ge";
    case OpKind::Eq: return "eq";
    case OpKind::Ne: return "ne";
    case OpKind::And: return "and";
    case OpKind::Or: return "or";
    case OpKind::Xor: return "xor";
    case OpKind::Neg: return "neg";
    case OpKind::Not: return "not";
    case OpKind::Exp: return "exp";
    case OpKind::Exp2: return "exp2";
    case OpKind::Log: return "log";
    case OpKind::Log2: return "log2";
    case OpKind::Sqrt: return "sqrt";
    case OpKind::Rsqrt: return "rsqrt";
    case OpKind::Sigmoid: return "sigmoid";
    case OpKind::Abs: return "abs";
    case OpKind::Erf: return "erf";
    case OpKind::Tanh: return "tanh";
    case OpKind::Sin: return "sin";
    case OpKind::Cos: return "cos";
    case OpKind::Log1p: return "log1p";
    case OpKind::Expm1: return "expm1";
    case OpKind::Tan: return "tan";
    case OpKind::Atan: return "atan";
    case OpKind::Sinh: return "sinh";
    case OpKind::Cosh: return "cosh";
    case OpKind::Asin: return "asin";
    case OpKind::Acos: return "acos";
    case OpKind::Floor: return "floor";
    case OpKind::Ceil: return "ceil";
    case OpKind::Where: return "where";
    case OpKind::Rand: return "rand";
    case OpKind::Cast: return "cast";
    case OpKind::AddPtr: return "add_ptr";
    case OpKind::ReduceSum: return "reduce_sum";
    case OpKind::ReduceMax: return "reduce_max";
    case OpKind::ReduceMin: return "reduce_min";
    case OpKind::Argmax: return "argmax";
    case OpKind::Argmin: return "argmin";
    case OpKind::CumSum: return "cumsum";
    case OpKind::Load: return "load";
    case OpKind::Store: return "store";
    case OpKind::AtomicAdd: return "atomic_add";
    case OpKind::Barrier: return "barrier";
    case OpKind::ForBegin: return "for_begin";
    case OpKind::LoopArg: return "loop_arg";
    case OpKind::ForEnd: return "for_end";
    case OpKind::LoopResult: return "loop_result";
    }
    return "?";
}

namespace {
std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}
}  // namespace

std::string print(const Function &f) {
    std::ostringstream os;
    os << "func @" << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
        const Param &p = f.params[i];
        os << (i ? ", " : "") << p.name << ": " << f.type(p.value).str();
    }
    for (const Constexpr &c : f.constexprs) os << ", " << c.name << ": constexpr = " << c.literal;
    os << ") {\n";
    int depth = 1;
    for (const Op &op : f.ops) {
        if (op.kind == OpKind::Param) continue;
        if (op.kind == OpKind::ForEnd) --depth;
        os << std::string(2 * depth, ' ');
        if (op.kind == OpKind::ForBegin) ++depth;
        if (op.result != kNoValue) os << "%" << op.result << " = ";
        os << op_name(op.kind);
        for (size_t i = 0; i < op.operands.size(); ++i) os << (i ? ", %" : " %") << op.operands[i];
        switch (op.kind) {
        case OpKind::Const:
            os << " " << num(op.fval);
            if (!op.name.empty()) os << " (" << op.name << ")";
            break;
        case OpKind::ProgramId:
        case OpKind::NumPrograms:
        case OpKind::ExpandDims: os << " axis=" << op.axis; break;
        case OpKind::Arange: os << " " << op.ival << ", " << op.ival2; break;
        case OpKind::ReduceSum:
        case OpKind::ReduceMax:
        case OpKind::ReduceMin:
        case OpKind::Argmax:
        case OpKind::Argmin: os << " axis=" << op.axis << (op.keep_dims ? " keep_dims" : ""); break;
        case OpKind::CumSum: os << " axis=" << op.axis << (op.ival ? " reverse" : ""); break;
        case OpKind::Split: os << " #" << op.ival; break;
        case OpKind::Load:
        case OpKind::Store:
            if (op.has_mask) os << " masked";
            break;
        case OpKind::AtomicAdd: os << " sem=" << op.name; break;
        case OpKind::Dot:
            if (!op.name.empty()) os << " precision=" << op.name;
            break;
        case OpKind::ForBegin: os << " (" << op.name << ")"; break;
        case OpKind::LoopArg:
        case OpKind::LoopResult: os << " #" << op.ival; break;
        default: break;
        }
        if (op.result != kNoValue) {
            os << " : " << f.type(op.result).str();
            const std::string &n = f.values[op.result].name;
            if (!n.empty()) os << "  // " << n;
        }
        os << "\n";
    }
    os << "}\n";
    return os.str();
}

}  // namespace tad::ir

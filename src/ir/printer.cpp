#include <cstdio>
#include <sstream>

#include "ir/ir.h"

namespace tad::ir {

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

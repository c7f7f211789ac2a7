#include "ir/ir.h"
#include "ir/text.h"

namespace tad::ir {

namespace {

// Each check returns "" when the op is fine, else what is wrong.

std::string result_not(const Function &f, const Op &op, const Type &want) {
    const Type &r = f.type(op.result);
    return r == want ? "" : "result " + r.str() + " should be " + want.str();
}

bool axis_in(int axis, const Type &t) { return axis >= 0 && axis < static_cast<int>(t.rank()); }

std::string axis_out_of_range(int axis) { return "axis " + std::to_string(axis) + " out of range"; }

std::string check_operands_defined(const Function &f, size_t i, const Op &op) {
    for (ValueId v : op.operands) {
        if (v < 0 || v >= static_cast<ValueId>(f.values.size())) return "bad operand";
        if (f.values[v].def_op >= static_cast<int>(i))
            return "operand %" + std::to_string(v) + " used before definition";
    }
    return "";
}

std::string check_elementwise_shapes(const Function &f, const Op &op) {
    const Type &r = f.type(op.result);
    // A cast's second operand only lends its dtype.
    for (ValueId v : op.kind == OpKind::Cast ? std::vector<ValueId>{op.operands[0]} : op.operands)
        if (!f.type(v).same_shape(r)) return "operand shape " + f.type(v).str() + " differs from result " + r.str();
    return "";
}

std::string check_same_elem(const Function &f, const Op &op) {
    return f.type(op.operands[0]).elem != f.type(op.operands[1]).elem ? "operand element types differ" : "";
}

std::string check_reshape(const Function &f, const Op &op) {
    const Type &x = f.type(op.operands[0]), &r = f.type(op.result);
    if (x.numel() != r.numel() || !(x.with_shape(r.shape) == r)) return x.str() + " does not reshape to " + r.str();
    return "";
}

std::string check_join(const Function &f, const Op &op) {
    Type want = f.type(op.operands[0]);
    if (!(f.type(op.operands[1]) == want))
        return "operand types " + want.str() + " and " + f.type(op.operands[1]).str() + " differ";
    want.shape.push_back(Dim{2, "2"});
    return result_not(f, op, want);
}

std::string check_split(const Function &f, const Op &op) {
    Type want = f.type(op.operands[0]);
    if (want.scalar() || want.shape.back().value != 2) return "the last dim of " + want.str() + " is not 2";
    if (op.ival != 0 && op.ival != 1) return "half " + std::to_string(op.ival) + " is not 0 or 1";
    want.shape.pop_back();
    return result_not(f, op, want);
}

std::string check_cumsum(const Function &f, const Op &op) {
    if (!axis_in(op.axis, f.type(op.operands[0]))) return axis_out_of_range(op.axis);
    return result_not(f, op, f.type(op.operands[0]));
}

std::string check_arg_extremum(const Function &f, const Op &op) {
    Type want = f.type(op.operands[0]).with_elem(DType::I32);
    if (!axis_in(op.axis, want)) return axis_out_of_range(op.axis);
    if (op.keep_dims)
        want.shape[op.axis] = Dim{1, "1"};
    else
        want.shape.erase(want.shape.begin() + op.axis);
    return result_not(f, op, want);
}

std::string check_dot(const Function &f, const Op &op) {
    const Type &a = f.type(op.operands[0]), &b = f.type(op.operands[1]);
    if (a.rank() != 2 || b.rank() != 2 || a.shape[1].value != b.shape[0].value)
        return "shapes " + a.str() + " and " + b.str() + " do not multiply";
    return check_same_elem(f, op);
}

std::string check_add_ptr(const Function &f, const Op &op) {
    return !f.type(op.operands[0]).is_ptr || f.type(op.operands[1]).is_float() ? "needs pointer + integer" : "";
}

std::string check_access(const Function &f, const Op &op) {
    const Type &p = f.type(op.operands[0]);
    if (!p.is_ptr) return "address is not a pointer";
    if (op.kind == OpKind::Load) return "";
    const Type &v = f.type(op.operands[1]);
    return v.elem != p.elem || !v.same_shape(p) ? "value " + v.str() + " does not match " + p.str() : "";
}

// The checks particular to the op's class or kind.
std::string check_op(const Function &f, const Op &op) {
    const OpClass cls = op_info(op.kind).cls;
    if (cls == OpClass::Binary) return check_same_elem(f, op);
    if (cls == OpClass::Memory) return check_access(f, op);
    switch (op.kind) {
    case OpKind::Where: return f.type(op.operands[0]).elem != DType::I1 ? "condition is not i1" : "";
    case OpKind::Rand:
    case OpKind::Randn: return f.type(op.operands[0]).scalar() ? "" : "the seed must be a scalar";
    case OpKind::Trans: return f.type(op.operands[0]).rank() != 2 ? "needs a 2-D tile" : "";
    case OpKind::Reshape: return check_reshape(f, op);
    case OpKind::Join: return check_join(f, op);
    case OpKind::Split: return check_split(f, op);
    case OpKind::CumSum: return check_cumsum(f, op);
    case OpKind::Argmax:
    case OpKind::Argmin: return check_arg_extremum(f, op);
    case OpKind::Dot: return check_dot(f, op);
    case OpKind::AddPtr: return check_add_ptr(f, op);
    default: return "";
    }
}

// "" when loop `l`'s bounds and carried types are right.
std::string check_loop_types(const Function &f, const Loop &l) {
    for (ValueId v : f.ops[l.begin].operands)
        if (!f.type(v).scalar() || f.type(v).is_float() || f.type(v).is_ptr)
            return "for_begin: bounds must be integer scalars";
    const Op &end = f.ops[l.end];
    for (size_t k = 0; k < l.args.size(); ++k) {
        const Op &arg = f.ops[l.args[k]];
        const std::string index = "#" + std::to_string(k);
        if (!(f.type(arg.result) == f.type(arg.operands[0])))
            return "loop_arg " + index + ": type differs from its init";
        if (!(f.type(end.operands[k]) == f.type(arg.result)))
            return "for_end: yield " + index + " " + f.type(end.operands[k]).str() + " differs from the carried " +
                   f.type(arg.result).str();
        if (!(f.type(f.ops[l.results[k]].result) == f.type(arg.result)))
            return "loop_result " + index + ": type differs";
    }
    return "";
}

// A value defined in the body is not visible after for_end.
std::string check_loop_scope(const Function &f, const Loop &l) {
    for (size_t i = static_cast<size_t>(l.end) + 1; i < f.ops.size(); ++i)
        for (ValueId v : f.ops[i].operands) {
            const int d = f.values[v].def_op;
            if (d > l.begin && d < l.end)
                return "op " + std::to_string(i) + " uses %" + std::to_string(v) + " of a loop body after the loop";
        }
    return "";
}

// Loop structure, scoping of body values, and carried types.
std::string verify_loops(const Function &f) {
    std::string problem;
    const std::vector<Loop> ls = loops(f, &problem);
    for (size_t k = 0; k < ls.size() && problem.empty(); ++k) {
        problem = check_loop_types(f, ls[k]);
        if (problem.empty()) problem = check_loop_scope(f, ls[k]);
    }
    return problem;
}

}  // namespace

std::string verify(const Function &f) {
    for (const Param &p : f.params)
        if (!p.final_of.empty() && p.kind != ParamKind::Pointer)
            return "parameter '" + p.name + "': final_of on a " + text::kind_name(p.kind) + " parameter";
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const Op &op = f.ops[i];
        std::string problem = check_operands_defined(f, i, op);
        if (problem.empty() && is_elementwise(op.kind)) problem = check_elementwise_shapes(f, op);
        if (problem.empty()) problem = check_op(f, op);
        if (!problem.empty()) return "op " + std::to_string(i) + " (" + op_name(op.kind) + "): " + problem;
    }
    return verify_loops(f);
}

}  // namespace tad::ir

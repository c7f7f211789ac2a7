#include "ir/ir.h"

namespace tad::ir {

namespace {
bool elementwise(OpKind k) {
    if (k == OpKind::ForBegin || k == OpKind::LoopArg || k == OpKind::ForEnd || k == OpKind::LoopResult) return false;
    return (k >= OpKind::Add && k <= OpKind::Ceil) || k == OpKind::Where || k == OpKind::Cast || k == OpKind::AddPtr;
}

// "" when op's result has type `want`, else what is wrong.
std::string result_not(const Function &f, const Op &op, const Type &want) {
    const Type &r = f.type(op.result);
    return r == want ? "" : ": result " + r.str() + " should be " + want.str();
}

bool axis_in(int axis, const Type &t) { return axis >= 0 && axis < static_cast<int>(t.rank()); }
}  // namespace

// Loop structure, scoping of body values, and carried types.
std::string verify_loops(const Function &f) {
    std::string problem;
    std::vector<Loop> ls = loops(f, &problem);
    if (!problem.empty()) return problem;
    for (const Loop &l : ls) {
        const Op &begin = f.ops[l.begin];
        for (ValueId v : begin.operands)
            if (!f.type(v).scalar() || f.type(v).is_float() || f.type(v).is_ptr)
                return "for_begin: bounds must be integer scalars";
        const Op &end = f.ops[l.end];
        for (size_t k = 0; k < l.args.size(); ++k) {
            const Op &arg = f.ops[l.args[k]];
            if (!(f.type(arg.result) == f.type(arg.operands[0])))
                return "loop_arg #" + std::to_string(k) + ": type differs from its init";
            if (!(f.type(end.operands[k]) == f.type(arg.result)))
                return "for_end: yield #" + std::to_string(k) + " " + f.type(end.operands[k]).str() +
                       " differs from the carried " + f.type(arg.result).str();
            if (!(f.type(f.ops[l.results[k]].result) == f.type(arg.result)))
                return "loop_result #" + std::to_string(k) + ": type differs";
        }
        // A value defined in the body is not visible after for_end.
        for (size_t i = static_cast<size_t>(l.end) + 1; i < f.ops.size(); ++i)
            for (ValueId v : f.ops[i].operands) {
                int d = f.values[v].def_op;
                if (d > l.begin && d < l.end)
                    return "op " + std::to_string(i) + " uses %" + std::to_string(v) + " of a loop body after the loop";
            }
    }
    return "";
}

std::string verify(const Function &f) {
    for (size_t i = 0; i < f.ops.size(); ++i) {
        const Op &op = f.ops[i];
        std::string at = "op " + std::to_string(i) + " (" + op_name(op.kind) + ")";
        for (ValueId v : op.operands) {
            if (v < 0 || v >= static_cast<ValueId>(f.values.size())) return at + ": bad operand";
            if (f.values[v].def_op >= static_cast<int>(i))
                return at + ": operand %" + std::to_string(v) + " used before definition";
        }
        if (elementwise(op.kind)) {
            const Type &r = f.type(op.result);
            // A cast's second operand only lends its dtype.
            for (ValueId v : op.kind == OpKind::Cast ? std::vector<ValueId>{op.operands[0]} : op.operands)
                if (!f.type(v).same_shape(r))
                    return at + ": operand shape " + f.type(v).str() + " differs from result " + r.str();
        }
        switch (op.kind) {
        case OpKind::Add:
        case OpKind::Sub:
        case OpKind::Mul:
        case OpKind::Div:
        case OpKind::Mod:
        case OpKind::Maximum:
        case OpKind::Minimum:
        case OpKind::Pow:
            if (f.type(op.operands[0]).elem != f.type(op.operands[1]).elem)
                return at + ": operand element types differ";
            break;
        case OpKind::Where:
            if (f.type(op.operands[0]).elem != DType::I1) return at + ": condition is not i1";
            break;
        case OpKind::Rand:
            if (!f.type(op.operands[0]).scalar()) return at + ": the seed must be a scalar";
            break;
        case OpKind::Trans:
            if (f.type(op.operands[0]).rank() != 2) return at + ": needs a 2-D tile";
            break;
        case OpKind::Reshape: {
            const Type &x = f.type(op.operands[0]), &r = f.type(op.result);
            if (x.numel() != r.numel() || !(x.with_shape(r.shape) == r))
                return at + ": " + x.str() + " does not reshape to " + r.str();
            break;
        }
        case OpKind::Join: {
            Type want = f.type(op.operands[0]);
            if (!(f.type(op.operands[1]) == want))
                return at + ": operand types " + want.str() + " and " + f.type(op.operands[1]).str() + " differ";
            want.shape.push_back(Dim{2, "2"});
            if (std::string e = result_not(f, op, want); !e.empty()) return at + e;
            break;
        }
        case OpKind::Split: {
            Type want = f.type(op.operands[0]);
            if (want.scalar() || want.shape.back().value != 2)
                return at + ": the last dim of " + want.str() + " is not 2";
            if (op.ival != 0 && op.ival != 1) return at + ": half " + std::to_string(op.ival) + " is not 0 or 1";
            want.shape.pop_back();
            if (std::string e = result_not(f, op, want); !e.empty()) return at + e;
            break;
        }
        case OpKind::CumSum:
            if (!axis_in(op.axis, f.type(op.operands[0])))
                return at + ": axis " + std::to_string(op.axis) + " out of range";
            if (std::string e = result_not(f, op, f.type(op.operands[0])); !e.empty()) return at + e;
            break;
        case OpKind::Argmax:
        case OpKind::Argmin: {
            Type want = f.type(op.operands[0]).with_elem(DType::I32);
            if (!axis_in(op.axis, want)) return at + ": axis " + std::to_string(op.axis) + " out of range";
            if (op.keep_dims)
                want.shape[op.axis] = Dim{1, "1"};
            else
                want.shape.erase(want.shape.begin() + op.axis);
            if (std::string e = result_not(f, op, want); !e.empty()) return at + e;
            break;
        }
        case OpKind::Dot: {
            const Type &a = f.type(op.operands[0]), &b = f.type(op.operands[1]);
            if (a.rank() != 2 || b.rank() != 2 || a.shape[1].value != b.shape[0].value)
                return at + ": shapes " + a.str() + " and " + b.str() + " do not multiply";
            if (a.elem != b.elem) return at + ": operand element types differ";
            break;
        }
        case OpKind::AddPtr:
            if (!f.type(op.operands[0]).is_ptr || f.type(op.operands[1]).is_float())
                return at + ": needs pointer + integer";
            break;
        case OpKind::Load:
        case OpKind::Store:
        case OpKind::AtomicAdd: {
            const Type &p = f.type(op.operands[0]);
            if (!p.is_ptr) return at + ": address is not a pointer";
            if (op.kind != OpKind::Load) {
                const Type &v = f.type(op.operands[1]);
                if (v.elem != p.elem || !v.same_shape(p))
                    return at + ": value " + v.str() + " does not match " + p.str();
            }
            break;
        }
        default: break;
        }
    }
    return verify_loops(f);
}

}  // namespace tad::ir

#include "passes/rising_end.h"

#include "passes/passes.h"

namespace tad::passes {

namespace {

using ir::OpKind;
using ir::ValueId;

class Rising {
public:
    Rising(const ir::Function &f, int axis) : f_(f), axis_(axis) {}

    // Whether v never falls as the program id rises.
    bool rises(ValueId v) {
        const ir::Op &op = f_.def(v);
        if (op.kind == OpKind::ProgramId) return op.axis == axis_ || refuse(v, "it reads another grid axis");
        if (!reads_program(v)) return true;
        switch (op.kind) {
        case OpKind::Cast: return widening(v) ? rises(op.operands[0]) : refuse(v, "it narrows");
        case OpKind::Add:
        case OpKind::Minimum:
        case OpKind::Maximum: return rises(op.operands[0]) && rises(op.operands[1]);
        case OpKind::Sub:
            return reads_program(op.operands[1]) ? refuse(v, "it subtracts the program id") : rises(op.operands[0]);
        case OpKind::Mul: {
            const int k = reads_program(op.operands[0]) ? 1 : 0;
            if (reads_program(op.operands[k])) return refuse(v, "it multiplies the program id by itself");
            return at_least(op.operands[k], 0, v) && rises(op.operands[1 - k]);
        }
        case OpKind::Div:
            if (reads_program(op.operands[1])) return refuse(v, "it divides by the program id");
            return at_least(op.operands[1], 1, v) && rises(op.operands[0]);
        default: return refuse(v, "it may fall as the program id rises");
        }
    }

    std::vector<Inequality> conditions;
    std::string why;

private:
    const ir::Function &f_;
    int axis_;

    bool refuse(ValueId v, const std::string &what) {
        if (why.empty()) why = op_at(f_, f_.values[v].def_op) + ": " + what;
        return false;
    }

    bool reads_program(ValueId v) const {
        return cone_any(f_, v, [](const ir::Op &op) { return op.kind == OpKind::ProgramId; });
    }

    bool widening(ValueId v) const {
        const ir::Type &from = f_.type(f_.def(v).operands[0]), &to = f_.type(v);
        return !ir::dtype_is_float(from.elem) && !ir::dtype_is_float(to.elem) &&
               ir::dtype_rank(to.elem) >= ir::dtype_rank(from.elem);
    }

    // Factor or divisor x is at least `least`: a literal that is, else a run-time condition on its
    // host expression (a polynomial of names).
    bool at_least(ValueId x, int64_t least, ValueId v) {
        std::string no;
        std::optional<HostExpr> e = host_expr(f_, x, &no);
        if (!e) return refuse(v, "its factor is not computable on the host");
        if (e->op == HostExpr::Const)
            return e->value >= least || refuse(v, "its factor is below " + std::to_string(least));
        std::optional<Poly> p = Poly::parse(e->str());
        if (!p) return refuse(v, "its factor is not a polynomial of names");
        conditions.push_back({*p, Poly::constant(least)});
        return true;
    }
};

// e with Name `from` replaced by `to`.
HostExpr substituted(HostExpr e, const std::string &from, const HostExpr &to) {
    if (e.op == HostExpr::Name && e.name == from) return to;
    for (HostExpr &a : e.args) a = substituted(a, from, to);
    return e;
}

}  // namespace

std::optional<RisingEnd> rising_end(const ir::Function &f, ValueId v, int axis, std::string *why) {
    Rising r(f, axis);
    if (!r.rises(v)) return *why = r.why, std::nullopt;
    std::optional<HostExpr> e = host_expr(f, v, why, true);
    if (!e) return std::nullopt;
    const std::string id = std::to_string(axis);
    HostExpr grid;
    grid.op = HostExpr::Name;
    grid.name = "num_programs(" + id + ")";
    HostExpr one;
    one.value = 1;
    HostExpr last;
    last.op = HostExpr::Sub;
    last.args = {grid, one};
    HostExpr zero;
    return RisingEnd{substituted(*e, "program_id(" + id + ")", last), substituted(*e, "program_id(" + id + ")", zero),
                     r.conditions};
}

}  // namespace tad::passes

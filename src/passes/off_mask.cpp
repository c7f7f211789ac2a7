// zero_off_mask and same_computation (off_mask.h).
#include "passes/off_mask.h"

#include <cmath>
#include <cstring>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "passes/passes.h"

namespace tad::passes {

using ir::OpKind;
using ir::ValueId;

namespace {

bool comparable(const ir::Op &op) {
    const ir::OpClass c = ir::op_info(op.kind).cls;
    return c != ir::OpClass::Memory && c != ir::OpClass::Loop && c != ir::OpClass::Random &&
           c != ir::OpClass::Barrier && op.kind != OpKind::Param;
}

bool same_attributes(const ir::Op &a, const ir::Op &b) {
    return a.kind == b.kind && a.operands.size() == b.operands.size() && a.axis == b.axis &&
           a.keep_dims == b.keep_dims && a.has_mask == b.has_mask && a.has_other == b.has_other &&
           std::memcmp(&a.fval, &b.fval, sizeof a.fval) == 0 && a.ival == b.ival && a.ival2 == b.ival2 &&
           a.name == b.name;
}

// One factor of a mask: it varies along dim `dim` of the tile; `value` is it before its broadcast
// (1 along every other dim).
struct Factor {
    int dim = -1;
    ValueId value = ir::kNoValue;
};

class Zeros {
public:
    explicit Zeros(const ir::Function &f) : f_(f), loops_(ir::loops(f)) {}

    // The factors of `mask` (rank `rank`), or false where it is not a conjunction of one-dim ones.
    bool factors(ValueId mask, std::vector<Factor> *out) const {
        const ir::Op &op = f_.def(mask);
        if (op.kind == OpKind::And) return factors(op.operands[0], out) && factors(op.operands[1], out);
        if (op.kind != OpKind::Broadcast && f_.type(mask).rank() == 1) return out->push_back({0, mask}), true;
        if (op.kind != OpKind::Broadcast) return false;
        const ValueId x = op.operands[0];
        const ir::Type &t = f_.type(x);
        if (t.rank() != f_.type(mask).rank()) return false;
        int dim = -1;
        for (size_t d = 0; d < t.rank(); ++d)
            if (t.shape[d].value != 1) {
                if (dim >= 0) return false;
                dim = static_cast<int>(d);
            }
        if (dim < 0) return false;
        out->push_back({dim, x});
        return true;
    }

    // Whether v is 0 at every index along f.dim where f.value is false.
    bool along(ValueId v, const Factor &fac) {
        if (zero_constant(f_, v)) return true;
        const ir::Op &op = f_.def(v);
        switch (op.kind) {
        case OpKind::Load: return op.has_mask && op.has_other && zero_constant(f_, op.operands[2]) && masks(op, fac);
        case OpKind::Dot:
            if (f_.type(v).rank() != 2) return false;
            return along(op.operands[fac.dim == 0 ? 0 : 1], fac);
        case OpKind::Add:
        case OpKind::Sub: return along(op.operands[0], fac) && along(op.operands[1], fac);
        case OpKind::Mul:
            return (along(op.operands[0], fac) && (finite_literal(op.operands[1]) || along(op.operands[1], fac))) ||
                   (finite_literal(op.operands[0]) && along(op.operands[1], fac));
        case OpKind::Div: return along(op.operands[0], fac) && finite_literal(op.operands[1], true);
        case OpKind::Where: return along(op.operands[1], fac) && along(op.operands[2], fac);
        case OpKind::Neg: return along(op.operands[0], fac);
        case OpKind::Cast:
            return f_.type(v).is_float() && f_.type(op.operands[0]).is_float() && along(op.operands[0], fac);
        case OpKind::LoopArg: return assumed_.count({v, fac.dim, fac.value}) > 0;
        case OpKind::LoopResult: return loop_result(v, fac);
        default: return false;
        }
    }

private:
    const ir::Function &f_;
    std::vector<ir::Loop> loops_;
    std::set<std::tuple<ValueId, int, ValueId>> assumed_;  // loop args taken as 0 (the induction)

    // Whether v is a literal (or a broadcast of one) that is finite, and not 0 where `nonzero`: 0
    // times it, and 0 divided by it, are 0. A constexpr's name is not one (another launch may set it).
    bool finite_literal(ValueId v, bool nonzero = false) const {
        const ir::Op &op = f_.def(v);
        if (op.kind == OpKind::Broadcast) return finite_literal(op.operands[0], nonzero);
        return op.kind == OpKind::Const && op.name.empty() && std::isfinite(op.fval) && (!nonzero || op.fval != 0.0);
    }

    // Whether load `op`'s mask has a factor equal to fac along the same dim.
    bool masks(const ir::Op &op, const Factor &fac) const {
        std::vector<Factor> fs;
        if (!factors(op.operands[1], &fs)) return false;
        for (const Factor &g : fs)
            if (g.dim == fac.dim && same_computation(f_, g.value, fac.value)) return true;
        return false;
    }

    // The result of a loop: 0 before the first iteration, and kept 0 by each.
    bool loop_result(ValueId v, const Factor &fac) {
        const int def = f_.values[v].def_op;
        for (const ir::Loop &l : loops_)
            for (size_t k = 0; k < l.results.size(); ++k) {
                if (l.results[k] != def) continue;
                const ir::Op &arg = f_.ops[l.args[k]];
                if (!along(arg.operands[0], fac)) return false;
                const auto key = std::make_tuple(arg.result, fac.dim, fac.value);
                assumed_.insert(key);
                const bool kept = along(f_.ops[l.end].operands[k], fac);
                assumed_.erase(key);
                return kept;
            }
        return false;
    }
};

}  // namespace

bool same_computation(const ir::Function &f, ValueId a, ValueId b) {
    if (a == b) return true;
    if (!(f.type(a) == f.type(b))) return false;
    const ir::Op &x = f.def(a), &y = f.def(b);
    if (!comparable(x) || !comparable(y) || !same_attributes(x, y)) return false;
    for (size_t i = 0; i < x.operands.size(); ++i)
        if (!same_computation(f, x.operands[i], y.operands[i])) return false;
    return true;
}

bool zero_off_mask(const ir::Function &f, ValueId v, ValueId mask) {
    Zeros z(f);
    std::vector<Factor> fs;
    if (f.type(mask).rank() != f.type(v).rank() || !z.factors(mask, &fs)) return false;
    for (const Factor &fac : fs)
        if (!z.along(v, fac)) return false;
    return true;
}

}  // namespace tad::passes

#include "ad/rules.h"

#include <cmath>

namespace tad::ad {

using ir::OpKind;
using ir::ValueId;

ValueId unbroadcast(ir::Builder &b, ValueId g, const std::vector<ir::Dim> &shape) {
    const ir::Function &f = b.func();
    size_t lead = f.type(g).rank() - shape.size();
    for (size_t i = 0; i < lead; ++i) g = b.reduce(OpKind::ReduceSum, g, 0, false);
    for (size_t i = 0; i < shape.size(); ++i)
        if (shape[i].value == 1 && f.type(g).shape[i].value != 1)
            g = b.reduce(OpKind::ReduceSum, g, static_cast<int>(i), true);
    return g;
}

ValueId RuleContext::constant(double v, ValueId like) {
    ir::Type t = b.func().type(like);  // a copy: building appends to the function's values
    return b.broadcast(b.constant(v, t.elem), t.shape);
}

namespace {

using C = RuleContext;

ValueId add(C &c, ValueId a, ValueId b) { return c.b.binary(OpKind::Add, a, b); }
ValueId sub(C &c, ValueId a, ValueId b) { return c.b.binary(OpKind::Sub, a, b); }
ValueId mul(C &c, ValueId a, ValueId b) { return c.b.binary(OpKind::Mul, a, b); }
ValueId div(C &c, ValueId a, ValueId b) { return c.b.binary(OpKind::Div, a, b); }
ValueId neg(C &c, ValueId a) { return c.b.unary(OpKind::Neg, a); }
ValueId select(C &c, ValueId cond, ValueId a, ValueId b) { return c.b.where(cond, a, b); }
ValueId one_plus(C &c, ValueId a) { return add(c, c.constant(1.0, a), a); }
ValueId square(C &c, ValueId a) { return mul(c, a, a); }

// Tangent arithmetic where kNoValue stands for a zero tangent, so that inactive operands cost no ops.
ValueId t_sub(C &c, ValueId s, ValueId t) {
    if (t == ir::kNoValue) return s;
    return s == ir::kNoValue ? neg(c, t) : c.b.binary(OpKind::Sub, s, t);
}
ValueId t_add(C &c, ValueId s, ValueId t) {
    if (t == ir::kNoValue) return s;
    return s == ir::kNoValue ? t : c.b.binary(OpKind::Add, s, t);
}
ValueId t_mul(C &c, ValueId t, ValueId factor) { return t == ir::kNoValue ? t : mul(c, t, factor); }
ValueId t_or_zero(C &c, ValueId t) { return t == ir::kNoValue ? c.constant(0, c.y()) : t; }

// ---- shapes ------------------------------------------------------------------------------------

constexpr RuleClass D = RuleClass::Differentiable;

Rule none(OpKind kind, RuleClass cls) { return {kind, cls, RuleShape::None, nullptr, nullptr}; }

// y = f(x) elementwise: ẏ = slope(ẋ), x̄ += slope(ȳ).
Rule unary(OpKind kind, Slope slope) {
    return {kind, D, RuleShape::Unary, [slope](VjpContext &c) { c.accumulate(c.op.operands[0], slope(c, c.g)); },
            [slope](JvpContext &c) { c.result = slope(c, c.dx[0]); }};
}

// How a linear op's tangent reads its operands.
struct Linearity {
    bool additive = false;  // y = a ± b: a zero tangent drops out of the sum instead of becoming a zero tile
    unsigned fixed = 0;  // bit i: operand i is not a linear argument (a condition, a dtype): its primal is read
};
constexpr Linearity kAdditive{true, 0};
constexpr Linearity fixed_operand(int i) { return {false, 1u << i}; }

// ẏ = op(ẋ₀, ẋ₁, ...): a linear op is its own tangent. A zero tangent is a zero tile, or drops out
// of an additive op (a + 0 = a, 0 + b = b, a − 0 = a, 0 − b = −b).
ValueId replay_on_tangents(JvpContext &c, Linearity lin) {
    auto linear_arg = [&](size_t i) { return (lin.fixed >> i & 1u) == 0; };
    size_t args = 0, zeros = 0;
    for (size_t i = 0; i < c.dx.size(); ++i) {
        if (!linear_arg(i)) continue;
        ++args;
        if (c.dx[i] == ir::kNoValue) ++zeros;
    }
    if (zeros == args) return ir::kNoValue;
    if (lin.additive && zeros > 0)
        return c.op.kind == OpKind::Sub ? t_sub(c, c.dx[0], c.dx[1]) : t_add(c, c.dx[0], c.dx[1]);
    ir::Op copy = c.op;
    for (size_t i = 0; i < copy.operands.size(); ++i) {
        if (!linear_arg(i))
            copy.operands[i] = c.x(i);
        else
            copy.operands[i] = c.dx[i] != ir::kNoValue ? c.dx[i] : c.constant(0, c.x(i));
    }
    return c.b.append(copy, c.fwd.type(c.op.result));
}

// A linear op: ẏ = op(ẋ₀, ...), and `transpose` gives the operands' cotangents.
Rule linear(OpKind kind, Transpose transpose, Linearity lin = {}) {
    return {kind, D, RuleShape::Linear, transpose, [lin](JvpContext &c) { c.result = replay_on_tangents(c, lin); }};
}

// y = a ⊙ b, linear in each operand with a diagonal Jacobian: `in_a` is t ↦ ∂y/∂a·t, `in_b` is
// t ↦ ∂y/∂b·t. ẏ = in_a(ȧ) + in_b(ḃ), ā += in_a(ȳ), b̄ += in_b(ȳ). ḃ's term is built first: the
// order the emitted tangent kernels have always had.
Rule bilinear(OpKind kind, Slope in_a, Slope in_b) {
    return {kind, D, RuleShape::Bilinear,
            [in_a, in_b](VjpContext &c) {
                c.accumulate(c.op.operands[0], in_a(c, c.g));
                c.accumulate(c.op.operands[1], in_b(c, c.g));
            },
            [in_a, in_b](JvpContext &c) {
                ValueId tb = c.dx[1] == ir::kNoValue ? ir::kNoValue : in_b(c, c.dx[1]);
                ValueId ta = c.dx[0] == ir::kNoValue ? ir::kNoValue : in_a(c, c.dx[0]);
                c.result = t_add(c, ta, tb);
            }};
}

Rule hand_written(OpKind kind, void (*vjp)(VjpContext &), void (*jvp)(JvpContext &)) {
    return {kind, D, RuleShape::HandWritten, vjp, jvp};
}

// ---- unary slopes: t ↦ f'(x)·t ------------------------------------------------------------------

// √(1−x²) of the op's operand: the slope of asin and acos is ±1 over it.
ValueId sqrt_one_minus_x2(C &c) {
    ValueId x = c.x(0);
    return c.b.unary(OpKind::Sqrt, sub(c, c.constant(1.0, x), square(c, x)));
}

ValueId exp_slope(C &c, ValueId t) { return mul(c, t, c.y()); }
ValueId exp2_slope(C &c, ValueId t) { return mul(c, mul(c, t, c.y()), c.constant(std::log(2.0), t)); }
ValueId log_slope(C &c, ValueId t) { return div(c, t, c.x(0)); }
ValueId log2_slope(C &c, ValueId t) { return div(c, t, mul(c, c.x(0), c.constant(std::log(2.0), t))); }
ValueId sqrt_slope(C &c, ValueId t) { return div(c, t, mul(c, c.y(), c.constant(2.0, t))); }
ValueId rsqrt_slope(C &c, ValueId t) {
    ValueId y = c.y();
    ValueId y3 = mul(c, mul(c, y, y), y);
    return mul(c, mul(c, t, y3), c.constant(-0.5, t));
}
ValueId sigmoid_slope(C &c, ValueId t) {
    ValueId y = c.y();
    ValueId one_minus = c.b.binary(OpKind::Sub, c.constant(1.0, y), y);
    return mul(c, mul(c, t, y), one_minus);
}
ValueId abs_slope(C &c, ValueId t) {
    ValueId x = c.x(0), zero = c.constant(0, x);
    ValueId pos = c.b.binary(OpKind::Gt, x, zero), negv = c.b.binary(OpKind::Lt, x, zero);
    return select(c, pos, t, select(c, negv, neg(c, t), c.constant(0, t)));
}
ValueId erf_slope(C &c, ValueId t) {
    ValueId x = c.x(0);
    ValueId e = c.b.unary(OpKind::Exp, neg(c, mul(c, x, x)));
    return mul(c, mul(c, t, e), c.constant(2.0 / std::sqrt(M_PI), t));
}
ValueId tanh_slope(C &c, ValueId t) {
    ValueId y = c.y();
    return mul(c, t, c.b.binary(OpKind::Sub, c.constant(1.0, y), mul(c, y, y)));
}
ValueId sin_slope(C &c, ValueId t) { return mul(c, t, c.b.unary(OpKind::Cos, c.x(0))); }
ValueId cos_slope(C &c, ValueId t) { return neg(c, mul(c, t, c.b.unary(OpKind::Sin, c.x(0)))); }
ValueId log1p_slope(C &c, ValueId t) { return div(c, t, one_plus(c, c.x(0))); }
ValueId expm1_slope(C &c, ValueId t) { return mul(c, t, one_plus(c, c.y())); }
ValueId tan_slope(C &c, ValueId t) { return mul(c, t, one_plus(c, square(c, c.y()))); }
ValueId atan_slope(C &c, ValueId t) { return div(c, t, one_plus(c, square(c, c.x(0)))); }
ValueId sinh_slope(C &c, ValueId t) { return mul(c, t, c.b.unary(OpKind::Cosh, c.x(0))); }
ValueId cosh_slope(C &c, ValueId t) { return mul(c, t, c.b.unary(OpKind::Sinh, c.x(0))); }
ValueId asin_slope(C &c, ValueId t) { return div(c, t, sqrt_one_minus_x2(c)); }
ValueId acos_slope(C &c, ValueId t) { return neg(c, div(c, t, sqrt_one_minus_x2(c))); }

// ---- bilinear slopes ----------------------------------------------------------------------------

ValueId times_b(C &c, ValueId t) { return mul(c, t, c.x(1)); }
ValueId times_a(C &c, ValueId t) { return mul(c, t, c.x(0)); }

// ---- transposes of the linear ops: ȳ -> the operands' cotangents --------------------------------

// A reduction's result (or its adjoint) with the reduced axis back as a unit dim, so that it
// broadcasts against the operand.
ValueId unreduce_dims(C &c, ValueId v) {
    const ir::Type &xt = c.fwd.type(c.op.operands[0]);
    return c.op.axis >= 0 && !c.op.keep_dims && xt.rank() > 1 ? c.b.expand_dims(v, c.op.axis) : v;
}

void transpose_broadcast(VjpContext &c) {
    c.accumulate(c.op.operands[0], unbroadcast(c.b, c.g, c.fwd.type(c.op.operands[0]).shape));
}
void transpose_expand_dims(VjpContext &c) {
    c.accumulate(c.op.operands[0], c.b.reduce(OpKind::ReduceSum, c.g, c.op.axis, false));
}
void transpose_add(VjpContext &c) {
    c.accumulate(c.op.operands[0], c.g);
    c.accumulate(c.op.operands[1], c.g);
}
void transpose_sub(VjpContext &c) {
    c.accumulate(c.op.operands[0], c.g);
    c.accumulate(c.op.operands[1], neg(c, c.g));
}
void transpose_neg(VjpContext &c) { c.accumulate(c.op.operands[0], neg(c, c.g)); }
void transpose_trans(VjpContext &c) { c.accumulate(c.op.operands[0], c.b.trans(c.g)); }
void transpose_reshape(VjpContext &c) {
    c.accumulate(c.op.operands[0], c.b.reshape(c.g, c.fwd.type(c.op.operands[0]).shape));
}
void transpose_join(VjpContext &c) {
    c.accumulate(c.op.operands[0], c.b.split(c.g, 0));
    c.accumulate(c.op.operands[1], c.b.split(c.g, 1));
}
void transpose_split(VjpContext &c) {
    ValueId zero = c.constant(0, c.g);
    c.accumulate(c.op.operands[0], c.op.ival == 0 ? c.b.join(c.g, zero) : c.b.join(zero, c.g));
}
void transpose_reduce_sum(VjpContext &c) {
    c.accumulate(c.op.operands[0], c.b.broadcast(unreduce_dims(c, c.g), c.fwd.type(c.op.operands[0]).shape));
}
void transpose_cumsum(VjpContext &c) { c.accumulate(c.op.operands[0], c.b.cumsum(c.g, c.op.axis, c.op.ival == 0)); }
void transpose_cast(VjpContext &c) {
    const ir::Type &from = c.fwd.type(c.op.operands[0]);
    if (!from.is_float()) return;
    c.accumulate(c.op.operands[0], c.b.cast(c.g, from.elem));
}
void transpose_where(VjpContext &c) {
    ValueId zero = c.constant(0, c.g), cond = c.x(0);
    c.accumulate(c.op.operands[1], select(c, cond, c.g, zero));
    c.accumulate(c.op.operands[2], select(c, cond, zero, c.g));
}

// ---- hand-written pairs: where no shape fits the op sequence they build -------------------------

// y = a/b: ā += ȳ/b, b̄ −= ȳ/b·y; ẏ = (ȧ − ḃ·y)/b (factored, so not one slope per operand).
void vjp_div(VjpContext &c) {
    ValueId ga = div(c, c.g, c.x(1));
    c.accumulate(c.op.operands[0], ga);
    c.accumulate(c.op.operands[1], neg(c, mul(c, ga, c.y())));
}
void jvp_div(JvpContext &c) { c.result = div(c, t_sub(c, c.dx[0], t_mul(c, c.dx[1], c.y())), c.x(1)); }

// trunc(a/b) for float operands, the quotient that Mod subtracts.
ValueId trunc_quotient(C &c) {
    ValueId q = div(c, c.x(0), c.x(1));
    ValueId nonneg = c.b.binary(OpKind::Ge, q, c.constant(0, q));
    return select(c, nonneg, c.b.unary(OpKind::Floor, q), c.b.unary(OpKind::Ceil, q));
}
// a % b = a − b·trunc(a/b): ā += ȳ, b̄ −= ȳ·trunc(a/b); ẏ = ȧ − ḃ·trunc(a/b).
void vjp_mod(VjpContext &c) {
    c.accumulate(c.op.operands[0], c.g);
    c.accumulate(c.op.operands[1], neg(c, mul(c, c.g, trunc_quotient(c))));
}
void jvp_mod(JvpContext &c) {
    c.result = t_sub(c, c.dx[0], c.dx[1] == ir::kNoValue ? ir::kNoValue : mul(c, c.dx[1], trunc_quotient(c)));
}

// Ties split the gradient equally (as torch.maximum / torch.minimum): kinks that cancel in the
// function, like the two in max(z, 0) + log(1 + exp(-|z|)), then cancel in its gradient too.
// `wins` is Gt for maximum, Lt for minimum.
ValueId tie_share(VjpContext &c, OpKind wins, ValueId a, ValueId b) {  // [a wins]·ȳ + ½[a = b]·ȳ
    ValueId zero = c.constant(0, c.g);
    ValueId half = mul(c, c.g, c.constant(0.5, c.g));
    return select(c, c.b.binary(wins, a, b), c.g, select(c, c.b.binary(OpKind::Eq, a, b), half, zero));
}
ValueId tie_tangent(JvpContext &c, OpKind wins) {  // [a wins]·ȧ + [b wins]·ḃ + ½[a = b]·(ȧ + ḃ)
    ValueId a = c.x(0), b = c.x(1), da = t_or_zero(c, c.dx[0]), db = t_or_zero(c, c.dx[1]);
    ValueId mean = mul(c, c.b.binary(OpKind::Add, da, db), c.constant(0.5, da));
    return select(c, c.b.binary(wins, a, b), da, select(c, c.b.binary(wins, b, a), db, mean));
}
// ā += ([a > b] + ½[a = b])·ȳ, b̄ += ([b > a] + ½[a = b])·ȳ; ẏ = ȧ, ḃ or their mean on ties.
void vjp_maximum(VjpContext &c) {
    c.accumulate(c.op.operands[0], tie_share(c, OpKind::Gt, c.x(0), c.x(1)));
    c.accumulate(c.op.operands[1], tie_share(c, OpKind::Gt, c.x(1), c.x(0)));
}
void jvp_maximum(JvpContext &c) { c.result = tie_tangent(c, OpKind::Gt); }
// ā += ([a < b] + ½[a = b])·ȳ, b̄ += ([b < a] + ½[a = b])·ȳ; ẏ = ȧ, ḃ or their mean on ties.
void vjp_minimum(VjpContext &c) {
    c.accumulate(c.op.operands[0], tie_share(c, OpKind::Lt, c.x(0), c.x(1)));
    c.accumulate(c.op.operands[1], tie_share(c, OpKind::Lt, c.x(1), c.x(0)));
}
void jvp_minimum(JvpContext &c) { c.result = tie_tangent(c, OpKind::Lt); }

// b·a^(b−1), the slope of aᵇ in a.
ValueId pow_slope(C &c) {
    ValueId a = c.x(0), b = c.x(1);
    return mul(c, b, c.b.binary(OpKind::Pow, a, sub(c, b, c.constant(1.0, b))));
}
// y = aᵇ: ā += ȳ·b·a^(b−1), b̄ += ȳ·ln a·y; ẏ = ȧ·b·a^(b−1) + ḃ·ln a·y (ȧ's term built first, unlike
// the bilinear shape). The slope in b is finite only for a > 0: elsewhere b̄ and ḃ's term come out
// NaN or infinite (with a constant exponent, as in x ** 2.0, nothing reads them).
void vjp_pow(VjpContext &c) {
    c.accumulate(c.op.operands[0], mul(c, c.g, pow_slope(c)));
    c.accumulate(c.op.operands[1], mul(c, mul(c, c.g, c.b.unary(OpKind::Log, c.x(0))), c.y()));
}
void jvp_pow(JvpContext &c) {
    ValueId da = c.dx[0] == ir::kNoValue ? ir::kNoValue : mul(c, c.dx[0], pow_slope(c));
    ValueId db =
        c.dx[1] == ir::kNoValue ? ir::kNoValue : mul(c, mul(c, c.dx[1], c.b.unary(OpKind::Log, c.x(0))), c.y());
    c.result = t_add(c, da, db);
}

// C = A·B: Ā += C̄·Bᵀ, B̄ += Aᵀ·C̄; Ċ = Ȧ·B + A·Ḃ. The cotangent meets the other operand in a
// tensor-core dot, so it is rounded to that operand's type first (as hand-written backwards do);
// products accumulate in the forward's result type.
void vjp_dot(VjpContext &c) {
    const ir::DType out = c.fwd.type(c.op.result).elem;
    ValueId a = c.x(0), b = c.x(1);
    ValueId g = c.b.cast_like(c.g, a);  // run-time dtypes: the module also serves other input dtypes
    c.accumulate(c.op.operands[0], c.b.cast_like(c.b.dot(g, c.b.trans(b), out, c.op.name), a));
    c.accumulate(c.op.operands[1], c.b.cast_like(c.b.dot(c.b.trans(a), g, out, c.op.name), b));
}
void jvp_dot(JvpContext &c) {
    const ir::DType out = c.fwd.type(c.op.result).elem;
    ValueId a = c.dx[0] == ir::kNoValue ? ir::kNoValue : c.b.dot(c.dx[0], c.x(1), out, c.op.name);
    ValueId b = c.dx[1] == ir::kNoValue ? ir::kNoValue : c.b.dot(c.x(0), c.dx[1], out, c.op.name);
    c.result = a == ir::kNoValue ? b : b == ir::kNoValue ? a : c.b.binary(OpKind::Add, a, b);
}

// The operand lanes equal to the max / min `y` they reduce to (y with the reduced axis as a unit dim).
ValueId extremum_hits(C &c, ValueId y) {
    return c.b.binary(OpKind::Eq, c.x(0), c.b.broadcast(y, c.fwd.type(c.op.operands[0]).shape));
}
// y = max or min along an axis: x̄ += ȳ·[x = y]/#{x = y}, ẏ = Σ[x = y]·ẋ/#{x = y}: ties share the
// gradient equally, and the tangent is the mean of the tied elements'.
void vjp_reduce_extremum(VjpContext &c) {
    const ir::Type &xt = c.fwd.type(c.op.operands[0]);
    ValueId y = unreduce_dims(c, c.y()), g = unreduce_dims(c, c.g);
    ValueId hit = extremum_hits(c, y);
    ValueId ones = c.b.where(hit, c.constant(1.0, c.x(0)), c.constant(0.0, c.x(0)));
    ValueId count = c.b.reduce(OpKind::ReduceSum, ones, c.op.axis, c.op.axis >= 0 && xt.rank() > 1);
    ValueId share = c.b.broadcast(div(c, g, c.b.cast(count, c.fwd.type(c.op.result).elem)), xt.shape);
    c.accumulate(c.op.operands[0], select(c, hit, share, c.constant(0, share)));
}
void jvp_reduce_extremum(JvpContext &c) {
    ValueId hit = extremum_hits(c, unreduce_dims(c, c.y())), t = c.dx[0];
    ValueId ones = c.b.where(hit, c.constant(1.0, c.x(0)), c.constant(0.0, c.x(0)));
    ValueId picked = c.b.reduce(OpKind::ReduceSum, select(c, hit, t, c.constant(0, t)), c.op.axis, c.op.keep_dims);
    ValueId count = c.b.reduce(OpKind::ReduceSum, ones, c.op.axis, c.op.keep_dims);
    c.result = div(c, picked, c.b.cast(count, c.fwd.type(c.op.result).elem));
}

// y = grad_via(a, s), valued a: the gradient is the surrogate's. s̄ += ȳ, ā gets none; ẏ = ṡ.
void vjp_grad_via(VjpContext &c) { c.accumulate(c.op.operands[1], c.g); }
void jvp_grad_via(JvpContext &c) { c.result = c.dx[1]; }

// y = replay_as(v, w) is v (w only stands for its value in the replay): v̄ += ȳ; ẏ = v̇.
void vjp_replay_as(VjpContext &c) { c.accumulate(c.op.operands[0], c.g); }
void jvp_replay_as(JvpContext &c) { c.result = c.dx[0]; }

constexpr RuleClass N = RuleClass::NonDifferentiable;
constexpr RuleClass M = RuleClass::Memory;
constexpr RuleClass L = RuleClass::Control;

}  // namespace

// The table. Notation: y = op(x) or op(a, b); ẋ a tangent, x̄ an adjoint (x̄ += ... in reverse mode);
// a unary rule's comment is its slope f'(x), a linear rule's its transpose.
const std::vector<Rule> &rules() {
    static const std::vector<Rule> table = {
        // Leaves, integers, masks and piecewise-constant ops: no gradient flows.
        none(OpKind::Param, N), none(OpKind::Const, N), none(OpKind::ProgramId, N), none(OpKind::NumPrograms, N),
        none(OpKind::Arange, N), none(OpKind::Lt, N), none(OpKind::Le, N), none(OpKind::Gt, N), none(OpKind::Ge, N),
        none(OpKind::Eq, N), none(OpKind::Ne, N), none(OpKind::And, N), none(OpKind::Or, N), none(OpKind::Xor, N),
        none(OpKind::Not, N), none(OpKind::Floor, N),  // zero derivative almost everywhere
        none(OpKind::Ceil, N), none(OpKind::Rand, N),
        none(OpKind::Randn, N),  // random numbers: none through the generator
        none(OpKind::AddPtr, N),  // pointers get shadows, not adjoints or tangents
        none(OpKind::Argmax, N),  // an index: piecewise constant
        none(OpKind::Argmin, N), none(OpKind::StopGradient, N),  // a derivation's constant by construction
        // Memory and loops: handled by the reverse and forward passes themselves.
        none(OpKind::Load, M), none(OpKind::Store, M), none(OpKind::AtomicAdd, M), none(OpKind::Barrier, M),
        none(OpKind::ForBegin, L), none(OpKind::LoopArg, L), none(OpKind::ForEnd, L), none(OpKind::LoopResult, L),

        // Unary, by their slope f'(x): ẏ = f'(x)·ẋ, x̄ += f'(x)·ȳ.
        unary(OpKind::Exp, exp_slope),  // eˣ = y
        unary(OpKind::Exp2, exp2_slope),  // 2ˣ·ln 2 = y·ln 2
        unary(OpKind::Log, log_slope),  // 1/x
        unary(OpKind::Log2, log2_slope),  // 1/(x·ln 2)
        unary(OpKind::Sqrt, sqrt_slope),  // 1/(2√x) = 1/(y·2)
        unary(OpKind::Rsqrt, rsqrt_slope),  // y = x^-½: -½·x^-3/2 = y³·(-½)
        unary(OpKind::Sigmoid, sigmoid_slope),  // y·(1−y)
        unary(OpKind::Abs, abs_slope),  // sign(x), sign(0) = 0 (a select, not a product)
        unary(OpKind::Erf, erf_slope),  // (2/√π)·e^(−x²)
        unary(OpKind::Tanh, tanh_slope),  // 1−y²
        unary(OpKind::Sin, sin_slope),  // cos x
        unary(OpKind::Cos, cos_slope),  // −sin x
        unary(OpKind::Log1p, log1p_slope),  // 1/(1+x)
        unary(OpKind::Expm1, expm1_slope),  // eˣ = 1+y
        unary(OpKind::Tan, tan_slope),  // sec²x = 1+y²
        unary(OpKind::Atan, atan_slope),  // 1/(1+x²)
        unary(OpKind::Sinh, sinh_slope),  // cosh x
        unary(OpKind::Cosh, cosh_slope),  // sinh x
        unary(OpKind::Asin, asin_slope),  // 1/√(1−x²)
        unary(OpKind::Acos, acos_slope),  // −1/√(1−x²)

        // Linear: ẏ = op(ẋ...), and the transpose gives x̄ from ȳ.
        linear(OpKind::Broadcast, transpose_broadcast),  // x̄ += Σ_{stretched dims} ȳ
        linear(OpKind::ExpandDims, transpose_expand_dims),  // x̄ += ȳ with the inserted unit dim summed away
        linear(OpKind::Add, transpose_add, kAdditive),  // ā += ȳ, b̄ += ȳ
        linear(OpKind::Sub, transpose_sub, kAdditive),  // ā += ȳ, b̄ −= ȳ
        linear(OpKind::Neg, transpose_neg),  // x̄ −= ȳ
        linear(OpKind::Trans, transpose_trans),  // x̄ += ȳᵀ
        linear(OpKind::Reshape, transpose_reshape),  // x̄ += reshape(ȳ, shape(x))
        linear(OpKind::Join, transpose_join),  // y = join(a, b): ā += split(ȳ)[0], b̄ += split(ȳ)[1]
        linear(OpKind::Split, transpose_split),  // y = split(x)[k]: x̄ += ȳ in half k, 0 in the other (a join)
        linear(OpKind::ReduceSum, transpose_reduce_sum),  // x̄ += broadcast(ȳ) along the reduced axis
        // yᵢ = Σ_{j≤i} xⱼ: x̄ⱼ += Σ_{i≥j} ȳᵢ, the prefix sum in the other direction
        linear(OpKind::CumSum, transpose_cumsum),
        // x̄ += cast(ȳ, dtype(x)) between float types. ẏ = cast(ẋ), to dtype(y) or to the second operand's
        // dtype at run time; a cast the trace's dtypes made a no-op stays (the module also runs on other
        // dtypes: a float16 tangent carried by a float32 loop).
        linear(OpKind::Cast, transpose_cast, fixed_operand(1)),
        linear(OpKind::Where, transpose_where, fixed_operand(0)),  // ā += [cond]·ȳ, b̄ += [¬cond]·ȳ

        // Bilinear, by the slope in each operand.
        bilinear(OpKind::Mul, times_b, times_a),  // ā += ȳ·b, b̄ += ȳ·a; ẏ = ȧ·b + ḃ·a

        // Hand-written pairs: their math is beside their functions above.
        hand_written(OpKind::Div, vjp_div, jvp_div),  // ā += ȳ/b, b̄ −= ȳ/b·y; ẏ = (ȧ − ḃ·y)/b
        hand_written(OpKind::Mod, vjp_mod, jvp_mod),  // ā += ȳ, b̄ −= ȳ·trunc(a/b); ẏ = ȧ − ḃ·trunc(a/b)
        hand_written(OpKind::Maximum, vjp_maximum, jvp_maximum),  // ties share: ā += ([a > b] + ½[a = b])·ȳ
        hand_written(OpKind::Minimum, vjp_minimum, jvp_minimum),  // ties share: ā += ([a < b] + ½[a = b])·ȳ
        hand_written(OpKind::Pow, vjp_pow, jvp_pow),  // ā += ȳ·b·a^(b−1), b̄ += ȳ·ln a·y
        hand_written(OpKind::Dot, vjp_dot, jvp_dot),  // Ā += C̄·Bᵀ, B̄ += Aᵀ·C̄ (C̄ cast to each operand's dtype)
        hand_written(OpKind::ReduceMax, vjp_reduce_extremum, jvp_reduce_extremum),  // x̄ += ȳ·[x = y]/#{x = y}
        hand_written(OpKind::ReduceMin, vjp_reduce_extremum, jvp_reduce_extremum),  // x̄ += ȳ·[x = y]/#{x = y}
        hand_written(OpKind::GradVia, vjp_grad_via, jvp_grad_via),  // s̄ += ȳ, ā none; ẏ = ṡ
        hand_written(OpKind::ReplayAs, vjp_replay_as, jvp_replay_as),  // v̄ += ȳ, w̄ none; ẏ = v̇
    };
    return table;
}

const Rule *rule_for(OpKind kind) {
    for (const Rule &r : rules())
        if (r.kind == kind) return &r;
    return nullptr;
}

}  // namespace tad::ad

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

namespace {

// A scalar broadcast to like's shape and element type.
ValueId splat(ir::Builder &b, double v, ValueId like) {
    ir::Type t = b.func().type(like);  // a copy: building appends to the function's values
    return b.broadcast(b.constant(v, t.elem), t.shape);
}

// Shared by both contexts (VjpContext, JvpContext).
template <class C> ValueId add(C &c, ValueId a, ValueId b) { return c.b.binary(OpKind::Add, a, b); }
template <class C> ValueId sub(C &c, ValueId a, ValueId b) { return c.b.binary(OpKind::Sub, a, b); }
template <class C> ValueId mul(C &c, ValueId a, ValueId b) { return c.b.binary(OpKind::Mul, a, b); }
template <class C> ValueId div(C &c, ValueId a, ValueId b) { return c.b.binary(OpKind::Div, a, b); }
template <class C> ValueId neg(C &c, ValueId a) { return c.b.unary(OpKind::Neg, a); }
template <class C> ValueId select(C &c, ValueId cond, ValueId a, ValueId b) { return c.b.where(cond, a, b); }
template <class C> ValueId one_plus(C &c, ValueId a) { return add(c, c.constant(1.0, a), a); }
template <class C> ValueId square(C &c, ValueId a) { return mul(c, a, a); }
// √(1−x²) of the op's operand: the slope of asin and acos is ±1 over it.
template <class C> ValueId sqrt_one_minus_x2(C &c) {
    ValueId x = c.x(0);
    return c.b.unary(OpKind::Sqrt, sub(c, c.constant(1.0, x), square(c, x)));
}

// Tangent arithmetic where kNoValue stands for a zero tangent, so that inactive operands cost no ops.
ValueId t_sub(JvpContext &c, ValueId s, ValueId t) {
    if (t == ir::kNoValue) return s;
    return s == ir::kNoValue ? neg(c, t) : c.b.binary(OpKind::Sub, s, t);
}
ValueId t_add(JvpContext &c, ValueId s, ValueId t) {
    if (t == ir::kNoValue) return s;
    return s == ir::kNoValue ? t : c.b.binary(OpKind::Add, s, t);
}
ValueId t_mul(JvpContext &c, ValueId t, ValueId factor) { return t == ir::kNoValue ? t : mul(c, t, factor); }
ValueId t_or_zero(JvpContext &c, ValueId t) { return t == ir::kNoValue ? c.constant(0, c.y()) : t; }

// trunc(a/b) for float operands, the quotient that Mod subtracts.
template <class C> ValueId trunc_quotient(C &c) {
    ValueId q = div(c, c.x(0), c.x(1));
    ValueId nonneg = c.b.binary(OpKind::Ge, q, c.constant(0, q));
    return select(c, nonneg, c.b.unary(OpKind::Floor, q), c.b.unary(OpKind::Ceil, q));
}

// A reduction's result (or its adjoint) with the reduced axis back as a unit dim, so that it
// broadcasts against the operand.
template <class C> ValueId unreduce_dims(C &c, ValueId v) {
    const ir::Type &xt = c.fwd.type(c.op.operands[0]);
    return c.op.axis >= 0 && !c.op.keep_dims && xt.rank() > 1 ? c.b.expand_dims(v, c.op.axis) : v;
}

// The operand lanes equal to the max / min `y` they reduce to (y with the reduced axis as a unit dim).
template <class C> ValueId extremum_hits(C &c, ValueId y) {
    return c.b.binary(OpKind::Eq, c.x(0), c.b.broadcast(y, c.fwd.type(c.op.operands[0]).shape));
}

void vjp_broadcast(VjpContext &c) {  // x̄ += Σ_{stretched dims} ȳ
    c.accumulate(c.op.operands[0], unbroadcast(c.b, c.g, c.fwd.type(c.op.operands[0]).shape));
}
void jvp_broadcast(JvpContext &c) {  // ẏ = broadcast(ẋ)
    c.result = c.b.broadcast(c.dx[0], c.fwd.type(c.op.result).shape);
}
void vjp_expand_dims(VjpContext &c) {  // x̄ += ȳ with the inserted unit dim summed away
    c.accumulate(c.op.operands[0], c.b.reduce(OpKind::ReduceSum, c.g, c.op.axis, false));
}
void jvp_expand_dims(JvpContext &c) { c.result = c.b.expand_dims(c.dx[0], c.op.axis); }  // ẏ = expand_dims(ẋ)
void vjp_add(VjpContext &c) {  // ā += ȳ, b̄ += ȳ
    c.accumulate(c.op.operands[0], c.g);
    c.accumulate(c.op.operands[1], c.g);
}
void jvp_add(JvpContext &c) { c.result = t_add(c, c.dx[0], c.dx[1]); }  // ẏ = ȧ + ḃ
void vjp_sub(VjpContext &c) {  // ā += ȳ, b̄ -= ȳ
    c.accumulate(c.op.operands[0], c.g);
    c.accumulate(c.op.operands[1], neg(c, c.g));
}
void jvp_sub(JvpContext &c) { c.result = t_sub(c, c.dx[0], c.dx[1]); }  // ẏ = ȧ − ḃ
void vjp_mul(VjpContext &c) {  // ā += ȳ·b, b̄ += ȳ·a
    c.accumulate(c.op.operands[0], mul(c, c.g, c.x(1)));
    c.accumulate(c.op.operands[1], mul(c, c.g, c.x(0)));
}
void jvp_mul(JvpContext &c) {  // ẏ = ȧ·b + a·ḃ
    c.result = t_add(c, t_mul(c, c.dx[0], c.x(1)), t_mul(c, c.dx[1], c.x(0)));
}
void vjp_div(VjpContext &c) {  // y = a/b: ā += ȳ/b, b̄ -= ȳ·y/b
    ValueId ga = div(c, c.g, c.x(1));
    c.accumulate(c.op.operands[0], ga);
    c.accumulate(c.op.operands[1], neg(c, mul(c, ga, c.y())));
}
void jvp_div(JvpContext &c) {  // y = a/b: ẏ = (ȧ − ḃ·y)/b
    c.result = div(c, t_sub(c, c.dx[0], t_mul(c, c.dx[1], c.y())), c.x(1));
}
void vjp_mod(VjpContext &c) {  // a % b = a − b·trunc(a/b): ā += ȳ, b̄ −= ȳ·trunc(a/b)
    c.accumulate(c.op.operands[0], c.g);
    c.accumulate(c.op.operands[1], neg(c, mul(c, c.g, trunc_quotient(c))));
}
void jvp_mod(JvpContext &c) {  // a % b = a − b·trunc(a/b): ẏ = ȧ − ḃ·trunc(a/b)
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
void vjp_maximum(VjpContext &c) {  // ā += ([a > b] + ½[a = b])·ȳ, b̄ += ([b > a] + ½[a = b])·ȳ
    c.accumulate(c.op.operands[0], tie_share(c, OpKind::Gt, c.x(0), c.x(1)));
    c.accumulate(c.op.operands[1], tie_share(c, OpKind::Gt, c.x(1), c.x(0)));
}
void jvp_maximum(JvpContext &c) { c.result = tie_tangent(c, OpKind::Gt); }  // ẏ = ȧ, ḃ or their mean on ties
void vjp_minimum(VjpContext &c) {  // ā += ([a < b] + ½[a = b])·ȳ, b̄ += ([b < a] + ½[a = b])·ȳ
    c.accumulate(c.op.operands[0], tie_share(c, OpKind::Lt, c.x(0), c.x(1)));
    c.accumulate(c.op.operands[1], tie_share(c, OpKind::Lt, c.x(1), c.x(0)));
}
void jvp_minimum(JvpContext &c) { c.result = tie_tangent(c, OpKind::Lt); }  // ẏ = ȧ, ḃ or their mean on ties
void vjp_neg(VjpContext &c) { c.accumulate(c.op.operands[0], neg(c, c.g)); }  // x̄ -= ȳ
void jvp_neg(JvpContext &c) { c.result = neg(c, c.dx[0]); }  // ẏ = −ẋ
void vjp_exp(VjpContext &c) { c.accumulate(c.op.operands[0], mul(c, c.g, c.y())); }  // x̄ += ȳ·eˣ
void jvp_exp(JvpContext &c) { c.result = mul(c, c.dx[0], c.y()); }  // ẏ = ẋ·eˣ
void vjp_exp2(VjpContext &c) {  // x̄ += ȳ·2ˣ·ln 2
    c.accumulate(c.op.operands[0], mul(c, mul(c, c.g, c.y()), c.constant(std::log(2.0), c.g)));
}
void jvp_exp2(JvpContext &c) {  // ẏ = ẋ·2ˣ·ln 2
    c.result = mul(c, mul(c, c.dx[0], c.y()), c.constant(std::log(2.0), c.dx[0]));
}
void vjp_log(VjpContext &c) { c.accumulate(c.op.operands[0], div(c, c.g, c.x(0))); }  // x̄ += ȳ/x
void jvp_log(JvpContext &c) { c.result = div(c, c.dx[0], c.x(0)); }  // ẏ = ẋ/x
void vjp_log2(VjpContext &c) {  // x̄ += ȳ/(x·ln 2)
    c.accumulate(c.op.operands[0], div(c, c.g, mul(c, c.x(0), c.constant(std::log(2.0), c.g))));
}
void jvp_log2(JvpContext &c) {  // ẏ = ẋ/(x·ln 2)
    c.result = div(c, c.dx[0], mul(c, c.x(0), c.constant(std::log(2.0), c.dx[0])));
}
void vjp_sqrt(VjpContext &c) {  // x̄ += ȳ/(2√x)
    c.accumulate(c.op.operands[0], div(c, c.g, mul(c, c.y(), c.constant(2.0, c.g))));
}
void jvp_sqrt(JvpContext &c) { c.result = div(c, c.dx[0], mul(c, c.y(), c.constant(2.0, c.dx[0]))); }  // ẏ = ẋ/(2√x)
void vjp_rsqrt(VjpContext &c) {  // y = x^-½: x̄ += -½·ȳ·y³
    ValueId y = c.y();
    ValueId y3 = mul(c, mul(c, y, y), y);
    c.accumulate(c.op.operands[0], mul(c, mul(c, c.g, y3), c.constant(-0.5, c.g)));
}
void jvp_rsqrt(JvpContext &c) {  // y = x^-½: ẏ = -½·ẋ·y³
    ValueId y = c.y();
    ValueId y3 = mul(c, mul(c, y, y), y);
    c.result = mul(c, mul(c, c.dx[0], y3), c.constant(-0.5, c.dx[0]));
}
void vjp_sigmoid(VjpContext &c) {  // x̄ += ȳ·y·(1−y)
    ValueId y = c.y();
    ValueId one_minus = c.b.binary(OpKind::Sub, c.constant(1.0, y), y);
    c.accumulate(c.op.operands[0], mul(c, mul(c, c.g, y), one_minus));
}
void jvp_sigmoid(JvpContext &c) {  // ẏ = ẋ·y·(1−y)
    ValueId y = c.y();
    ValueId one_minus = c.b.binary(OpKind::Sub, c.constant(1.0, y), y);
    c.result = mul(c, mul(c, c.dx[0], y), one_minus);
}
void vjp_abs(VjpContext &c) {  // x̄ += sign(x)·ȳ, sign(0) = 0
    ValueId x = c.x(0), zero = c.constant(0, x);
    ValueId pos = c.b.binary(OpKind::Gt, x, zero), negv = c.b.binary(OpKind::Lt, x, zero);
    ValueId gz = c.constant(0, c.g);
    c.accumulate(c.op.operands[0], select(c, pos, c.g, select(c, negv, neg(c, c.g), gz)));
}
void jvp_abs(JvpContext &c) {  // ẏ = sign(x)·ẋ, sign(0) = 0
    ValueId x = c.x(0), zero = c.constant(0, x), t = c.dx[0];
    ValueId pos = c.b.binary(OpKind::Gt, x, zero), negv = c.b.binary(OpKind::Lt, x, zero);
    c.result = select(c, pos, t, select(c, negv, neg(c, t), c.constant(0, t)));
}
void vjp_erf(VjpContext &c) {  // x̄ += ȳ·(2/√π)·e^(−x²)
    ValueId x = c.x(0);
    ValueId e = c.b.unary(OpKind::Exp, neg(c, mul(c, x, x)));
    c.accumulate(c.op.operands[0], mul(c, mul(c, c.g, e), c.constant(2.0 / std::sqrt(M_PI), c.g)));
}
void jvp_erf(JvpContext &c) {  // ẏ = ẋ·(2/√π)·e^(−x²)
    ValueId x = c.x(0);
    ValueId e = c.b.unary(OpKind::Exp, neg(c, mul(c, x, x)));
    c.result = mul(c, mul(c, c.dx[0], e), c.constant(2.0 / std::sqrt(M_PI), c.dx[0]));
}
void vjp_tanh(VjpContext &c) {  // x̄ += ȳ·(1−y²)
    ValueId y = c.y();
    ValueId d = c.b.binary(OpKind::Sub, c.constant(1.0, y), mul(c, y, y));
    c.accumulate(c.op.operands[0], mul(c, c.g, d));
}
void jvp_tanh(JvpContext &c) {  // ẏ = ẋ·(1−y²)
    ValueId y = c.y();
    c.result = mul(c, c.dx[0], c.b.binary(OpKind::Sub, c.constant(1.0, y), mul(c, y, y)));
}
void vjp_sin(VjpContext &c) {  // x̄ += ȳ·cos x
    c.accumulate(c.op.operands[0], mul(c, c.g, c.b.unary(OpKind::Cos, c.x(0))));
}
void jvp_sin(JvpContext &c) { c.result = mul(c, c.dx[0], c.b.unary(OpKind::Cos, c.x(0))); }  // ẏ = ẋ·cos x
void vjp_cos(VjpContext &c) {  // x̄ -= ȳ·sin x
    c.accumulate(c.op.operands[0], neg(c, mul(c, c.g, c.b.unary(OpKind::Sin, c.x(0)))));
}
void jvp_cos(JvpContext &c) { c.result = neg(c, mul(c, c.dx[0], c.b.unary(OpKind::Sin, c.x(0)))); }  // ẏ = −ẋ·sin x
void vjp_log1p(VjpContext &c) { c.accumulate(c.op.operands[0], div(c, c.g, one_plus(c, c.x(0)))); }  // x̄ += ȳ/(1+x)
void jvp_log1p(JvpContext &c) { c.result = div(c, c.dx[0], one_plus(c, c.x(0))); }  // ẏ = ẋ/(1+x)
void vjp_expm1(VjpContext &c) {
    c.accumulate(c.op.operands[0], mul(c, c.g, one_plus(c, c.y())));
}  // x̄ += ȳ·eˣ = ȳ·(1+y)
void jvp_expm1(JvpContext &c) { c.result = mul(c, c.dx[0], one_plus(c, c.y())); }  // ẏ = ẋ·(1+y)
void vjp_tan(VjpContext &c) {  // x̄ += ȳ·sec²x = ȳ·(1+y²)
    c.accumulate(c.op.operands[0], mul(c, c.g, one_plus(c, square(c, c.y()))));
}
void jvp_tan(JvpContext &c) { c.result = mul(c, c.dx[0], one_plus(c, square(c, c.y()))); }  // ẏ = ẋ·(1+y²)
void vjp_atan(VjpContext &c) {  // x̄ += ȳ/(1+x²)
    c.accumulate(c.op.operands[0], div(c, c.g, one_plus(c, square(c, c.x(0)))));
}
void jvp_atan(JvpContext &c) { c.result = div(c, c.dx[0], one_plus(c, square(c, c.x(0)))); }  // ẏ = ẋ/(1+x²)
void vjp_sinh(VjpContext &c) {  // x̄ += ȳ·cosh x
    c.accumulate(c.op.operands[0], mul(c, c.g, c.b.unary(OpKind::Cosh, c.x(0))));
}
void jvp_sinh(JvpContext &c) { c.result = mul(c, c.dx[0], c.b.unary(OpKind::Cosh, c.x(0))); }  // ẏ = ẋ·cosh x
void vjp_cosh(VjpContext &c) {  // x̄ += ȳ·sinh x
    c.accumulate(c.op.operands[0], mul(c, c.g, c.b.unary(OpKind::Sinh, c.x(0))));
}
void jvp_cosh(JvpContext &c) { c.result = mul(c, c.dx[0], c.b.unary(OpKind::Sinh, c.x(0))); }  // ẏ = ẋ·sinh x
void vjp_asin(VjpContext &c) { c.accumulate(c.op.operands[0], div(c, c.g, sqrt_one_minus_x2(c))); }  // x̄ += ȳ/√(1−x²)
void jvp_asin(JvpContext &c) { c.result = div(c, c.dx[0], sqrt_one_minus_x2(c)); }  // ẏ = ẋ/√(1−x²)
void vjp_acos(VjpContext &c) {
    c.accumulate(c.op.operands[0], neg(c, div(c, c.g, sqrt_one_minus_x2(c))));
}  // x̄ -= ȳ/√(1−x²)
void jvp_acos(JvpContext &c) { c.result = neg(c, div(c, c.dx[0], sqrt_one_minus_x2(c))); }  // ẏ = −ẋ/√(1−x²)
// b·a^(b−1), the slope of aᵇ in a.
template <class C> ValueId pow_slope(C &c) {
    ValueId a = c.x(0), b = c.x(1);
    return mul(c, b, c.b.binary(OpKind::Pow, a, sub(c, b, c.constant(1.0, b))));
}
// The slope in b, ln a·aᵇ, is finite only for a > 0: elsewhere b̄ and ḃ's term come out NaN or
// infinite (with a constant exponent, as in x ** 2.0, nothing reads them).
void vjp_pow(VjpContext &c) {  // y = aᵇ: ā += ȳ·b·a^(b−1), b̄ += ȳ·ln a·y
    c.accumulate(c.op.operands[0], mul(c, c.g, pow_slope(c)));
    c.accumulate(c.op.operands[1], mul(c, mul(c, c.g, c.b.unary(OpKind::Log, c.x(0))), c.y()));
}
void jvp_pow(JvpContext &c) {  // y = aᵇ: ẏ = ȧ·b·a^(b−1) + ḃ·ln a·y
    ValueId da = c.dx[0] == ir::kNoValue ? ir::kNoValue : mul(c, c.dx[0], pow_slope(c));
    ValueId db =
        c.dx[1] == ir::kNoValue ? ir::kNoValue : mul(c, mul(c, c.dx[1], c.b.unary(OpKind::Log, c.x(0))), c.y());
    c.result = t_add(c, da, db);
}
void vjp_where(VjpContext &c) {  // ā += [cond]·ȳ, b̄ += [¬cond]·ȳ
    ValueId zero = c.constant(0, c.g), cond = c.x(0);
    c.accumulate(c.op.operands[1], select(c, cond, c.g, zero));
    c.accumulate(c.op.operands[2], select(c, cond, zero, c.g));
}
void jvp_where(JvpContext &c) {  // ẏ = cond ? ȧ : ḃ
    c.result = select(c, c.x(0), t_or_zero(c, c.dx[1]), t_or_zero(c, c.dx[2]));
}
void vjp_cast(VjpContext &c) {  // x̄ += cast(ȳ, dtype(x)) between float types
    const ir::Type &from = c.fwd.type(c.op.operands[0]);
    if (!from.is_float()) return;
    c.accumulate(c.op.operands[0], c.b.cast(c.g, from.elem));
}
// ẏ = cast(ẋ, dtype(y)); dtype(y) read at run time where the cast does. A cast the trace's dtypes
// made a no-op stays: the module also runs on other dtypes (a float16 tangent carried by a float32 loop).
void jvp_cast(JvpContext &c) {
    c.result = c.op.operands.size() > 1 ? c.b.cast_like(c.dx[0], c.x(1))
                                        : c.b.cast(c.dx[0], c.fwd.type(c.op.result).elem, /*keep=*/true);
}
void vjp_trans(VjpContext &c) { c.accumulate(c.op.operands[0], c.b.trans(c.g)); }  // x̄ += ȳᵀ
void jvp_trans(JvpContext &c) { c.result = c.b.trans(c.dx[0]); }  // ẏ = ẋᵀ
void vjp_reshape(VjpContext &c) {  // x̄ += reshape(ȳ, shape(x))
    c.accumulate(c.op.operands[0], c.b.reshape(c.g, c.fwd.type(c.op.operands[0]).shape));
}
void jvp_reshape(JvpContext &c) {
    c.result = c.b.reshape(c.dx[0], c.fwd.type(c.op.result).shape);
}  // ẏ = reshape(ẋ, shape(y))
void vjp_join(VjpContext &c) {  // y = join(a, b): ā += split(ȳ)[0], b̄ += split(ȳ)[1]
    c.accumulate(c.op.operands[0], c.b.split(c.g, 0));
    c.accumulate(c.op.operands[1], c.b.split(c.g, 1));
}
void jvp_join(JvpContext &c) {  // ẏ = join(ȧ, ḃ)
    ValueId da = c.dx[0], db = c.dx[1];
    c.result = c.b.join(da == ir::kNoValue ? c.constant(0, db) : da, db == ir::kNoValue ? c.constant(0, da) : db);
}
void vjp_split(VjpContext &c) {  // y = split(x)[k]: x̄ += ȳ in half k, 0 in the other (a join)
    ValueId zero = c.constant(0, c.g);
    c.accumulate(c.op.operands[0], c.op.ival == 0 ? c.b.join(c.g, zero) : c.b.join(zero, c.g));
}
void jvp_split(JvpContext &c) { c.result = c.b.split(c.dx[0], static_cast<int>(c.op.ival)); }  // ẏ = split(ẋ)[k]
// The cotangent meets the other operand in a tensor-core dot, so it is rounded to that operand's
// type first (as hand-written backwards do); products accumulate in the forward's result type.
void vjp_dot(VjpContext &c) {  // C = A·B: Ā += C̄·Bᵀ, B̄ += Aᵀ·C̄
    const ir::DType out = c.fwd.type(c.op.result).elem;
    ValueId a = c.x(0), b = c.x(1);
    ValueId g = c.b.cast_like(c.g, a);  // run-time dtypes: the module also serves other input dtypes
    c.accumulate(c.op.operands[0], c.b.cast_like(c.b.dot(g, c.b.trans(b), out, c.op.name), a));
    c.accumulate(c.op.operands[1], c.b.cast_like(c.b.dot(c.b.trans(a), g, out, c.op.name), b));
}
void jvp_dot(JvpContext &c) {  // Ċ = Ȧ·B + A·Ḃ
    const ir::DType out = c.fwd.type(c.op.result).elem;
    ValueId a = c.dx[0] == ir::kNoValue ? ir::kNoValue : c.b.dot(c.dx[0], c.x(1), out, c.op.name);
    ValueId b = c.dx[1] == ir::kNoValue ? ir::kNoValue : c.b.dot(c.x(0), c.dx[1], out, c.op.name);
    c.result = a == ir::kNoValue ? b : b == ir::kNoValue ? a : c.b.binary(OpKind::Add, a, b);
}
void vjp_reduce_sum(VjpContext &c) {  // x̄ += broadcast(ȳ) along the reduced axis
    c.accumulate(c.op.operands[0], c.b.broadcast(unreduce_dims(c, c.g), c.fwd.type(c.op.operands[0]).shape));
}
void jvp_reduce_sum(JvpContext &c) {  // ẏ = Σ ẋ along the reduced axis
    c.result = c.b.reduce(OpKind::ReduceSum, c.dx[0], c.op.axis, c.op.keep_dims);
}
void vjp_reduce_extremum(VjpContext &c) {  // x̄ += ȳ·[x = y]/#{x = y}: ties share the gradient equally
    const ir::Type &xt = c.fwd.type(c.op.operands[0]);
    ValueId y = unreduce_dims(c, c.y()), g = unreduce_dims(c, c.g);
    ValueId hit = extremum_hits(c, y);
    ValueId ones = c.b.where(hit, c.constant(1.0, c.x(0)), c.constant(0.0, c.x(0)));
    ValueId count = c.b.reduce(OpKind::ReduceSum, ones, c.op.axis, c.op.axis >= 0 && xt.rank() > 1);
    ValueId share = c.b.broadcast(div(c, g, c.b.cast(count, c.fwd.type(c.op.result).elem)), xt.shape);
    c.accumulate(c.op.operands[0], select(c, hit, share, c.constant(0, share)));
}
void jvp_reduce_extremum(JvpContext &c) {  // ẏ = Σ[x = y]·ẋ / #{x = y}: the mean tangent of the tied elements
    ValueId hit = extremum_hits(c, unreduce_dims(c, c.y())), t = c.dx[0];
    ValueId ones = c.b.where(hit, c.constant(1.0, c.x(0)), c.constant(0.0, c.x(0)));
    ValueId picked = c.b.reduce(OpKind::ReduceSum, select(c, hit, t, c.constant(0, t)), c.op.axis, c.op.keep_dims);
    ValueId count = c.b.reduce(OpKind::ReduceSum, ones, c.op.axis, c.op.keep_dims);
    c.result = div(c, picked, c.b.cast(count, c.fwd.type(c.op.result).elem));
}
void vjp_cumsum(VjpContext &c) {  // yᵢ = Σ_{j≤i} xⱼ: x̄ⱼ += Σ_{i≥j} ȳᵢ, the prefix sum in the other direction
    c.accumulate(c.op.operands[0], c.b.cumsum(c.g, c.op.axis, c.op.ival == 0));
}
void jvp_cumsum(JvpContext &c) { c.result = c.b.cumsum(c.dx[0], c.op.axis, c.op.ival != 0); }  // ẏ = cumsum(ẋ)

constexpr RuleClass D = RuleClass::Differentiable;
constexpr RuleClass N = RuleClass::NonDifferentiable;
constexpr RuleClass M = RuleClass::Memory;
constexpr RuleClass C = RuleClass::Control;

}  // namespace

ValueId VjpContext::constant(double v, ValueId like) { return splat(b, v, like); }
ValueId JvpContext::constant(double v, ValueId like) { return splat(b, v, like); }

const std::vector<Rule> &rules() {
    static const std::vector<Rule> table = {
        {OpKind::Param, N, nullptr, nullptr},
        {OpKind::Const, N, nullptr, nullptr},
        {OpKind::ProgramId, N, nullptr, nullptr},
        {OpKind::NumPrograms, N, nullptr, nullptr},
        {OpKind::Arange, N, nullptr, nullptr},
        {OpKind::Broadcast, D, vjp_broadcast, jvp_broadcast},
        {OpKind::ExpandDims, D, vjp_expand_dims, jvp_expand_dims},
        {OpKind::Add, D, vjp_add, jvp_add},
        {OpKind::Sub, D, vjp_sub, jvp_sub},
        {OpKind::Mul, D, vjp_mul, jvp_mul},
        {OpKind::Div, D, vjp_div, jvp_div},
        {OpKind::Mod, D, vjp_mod, jvp_mod},
        {OpKind::Maximum, D, vjp_maximum, jvp_maximum},
        {OpKind::Minimum, D, vjp_minimum, jvp_minimum},
        {OpKind::Pow, D, vjp_pow, jvp_pow},
        {OpKind::Lt, N, nullptr, nullptr},
        {OpKind::Le, N, nullptr, nullptr},
        {OpKind::Gt, N, nullptr, nullptr},
        {OpKind::Ge, N, nullptr, nullptr},
        {OpKind::Eq, N, nullptr, nullptr},
        {OpKind::Ne, N, nullptr, nullptr},
        {OpKind::And, N, nullptr, nullptr},
        {OpKind::Or, N, nullptr, nullptr},
        {OpKind::Xor, N, nullptr, nullptr},
        {OpKind::Neg, D, vjp_neg, jvp_neg},
        {OpKind::Not, N, nullptr, nullptr},
        {OpKind::Exp, D, vjp_exp, jvp_exp},
        {OpKind::Exp2, D, vjp_exp2, jvp_exp2},
        {OpKind::Log, D, vjp_log, jvp_log},
        {OpKind::Log2, D, vjp_log2, jvp_log2},
        {OpKind::Sqrt, D, vjp_sqrt, jvp_sqrt},
        {OpKind::Rsqrt, D, vjp_rsqrt, jvp_rsqrt},
        {OpKind::Sigmoid, D, vjp_sigmoid, jvp_sigmoid},
        {OpKind::Abs, D, vjp_abs, jvp_abs},
        {OpKind::Erf, D, vjp_erf, jvp_erf},
        {OpKind::Tanh, D, vjp_tanh, jvp_tanh},
        {OpKind::Sin, D, vjp_sin, jvp_sin},
        {OpKind::Cos, D, vjp_cos, jvp_cos},
        {OpKind::Log1p, D, vjp_log1p, jvp_log1p},
        {OpKind::Expm1, D, vjp_expm1, jvp_expm1},
        {OpKind::Tan, D, vjp_tan, jvp_tan},
        {OpKind::Atan, D, vjp_atan, jvp_atan},
        {OpKind::Sinh, D, vjp_sinh, jvp_sinh},
        {OpKind::Cosh, D, vjp_cosh, jvp_cosh},
        {OpKind::Asin, D, vjp_asin, jvp_asin},
        {OpKind::Acos, D, vjp_acos, jvp_acos},
        {OpKind::Floor, N, nullptr, nullptr},  // zero derivative almost everywhere
        {OpKind::Ceil, N, nullptr, nullptr},
        {OpKind::Where, D, vjp_where, jvp_where},
        {OpKind::Cast, D, vjp_cast, jvp_cast},
        {OpKind::Rand, N, nullptr, nullptr},  // random numbers: no gradient through the generator
        {OpKind::Trans, D, vjp_trans, jvp_trans},
        {OpKind::Reshape, D, vjp_reshape, jvp_reshape},
        {OpKind::Join, D, vjp_join, jvp_join},
        {OpKind::Split, D, vjp_split, jvp_split},
        {OpKind::Dot, D, vjp_dot, jvp_dot},
        {OpKind::AddPtr, N, nullptr, nullptr},  // pointers get shadows, not adjoints or tangents
        {OpKind::ReduceSum, D, vjp_reduce_sum, jvp_reduce_sum},
        {OpKind::ReduceMax, D, vjp_reduce_extremum, jvp_reduce_extremum},
        {OpKind::ReduceMin, D, vjp_reduce_extremum, jvp_reduce_extremum},
        {OpKind::Argmax, N, nullptr, nullptr},  // an index: piecewise constant
        {OpKind::Argmin, N, nullptr, nullptr},
        {OpKind::CumSum, D, vjp_cumsum, jvp_cumsum},
        {OpKind::Load, M, nullptr, nullptr},
        {OpKind::Store, M, nullptr, nullptr},
        {OpKind::AtomicAdd, M, nullptr, nullptr},
        {OpKind::Barrier, M, nullptr, nullptr},
        {OpKind::ForBegin, C, nullptr, nullptr},
        {OpKind::LoopArg, C, nullptr, nullptr},
        {OpKind::ForEnd, C, nullptr, nullptr},
        {OpKind::LoopResult, C, nullptr, nullptr},
    };
    return table;
}

const Rule *rule_for(OpKind kind) {
    for (const Rule &r : rules())
        if (r.kind == kind) return &r;
    return nullptr;
}

}  // namespace tad::ad

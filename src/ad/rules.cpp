#include "ad/rules.h"

#include <cmath>

namespace tad::ad {

using ir::OpKind;
using ir::ValueId;

ValueId VjpContext::constant(double v, ValueId like) {
    ir::Type t = b.func().type(like);  // a copy: building appends to the function's values
    return b.broadcast(b.constant(v, t.elem), t.shape);
}

ValueId unbroadcast(ir::Builder &b, ValueId g, const std::vector<ir::Dim> &shape) {
    const ir::Function &f = b.func();
    size_t lead = f.type(g).rank() - shape.size();
    for (size_t i = 0; i < lead; ++i) g = b.reduce(OpKind::ReduceSum, g, 0, false);
    for (size_t i = 0; i < shape.size(); ++i)
        if (shape[i].value == 1 && f.type(g).shape[i].value != 1) g = b.reduce(OpKind::ReduceSum, g, static_cast<int>(i), true);
    return g;
}

namespace {

ValueId mul(VjpContext &c, ValueId a, ValueId b) { return c.b.binary(OpKind::Mul, a, b); }
ValueId div(VjpContext &c, ValueId a, ValueId b) { return c.b.binary(OpKind::Div, a, b); }
ValueId neg(VjpContext &c, ValueId a) { return c.b.unary(OpKind::Neg, a); }
ValueId select(VjpContext &c, ValueId cond, ValueId a, ValueId b) { return c.b.where(cond, a, b); }

void vjp_broadcast(VjpContext &c) {  // x̄ += Σ_{stretched dims} ȳ
    c.accumulate(c.op.operands[0], unbroadcast(c.b, c.g, c.fwd.type(c.op.operands[0]).shape));
}
void vjp_expand_dims(VjpContext &c) {  // x̄ += ȳ with the inserted unit dim summed away
    c.accumulate(c.op.operands[0], c.b.reduce(OpKind::ReduceSum, c.g, c.op.axis, false));
}
void vjp_add(VjpContext &c) {  // ā += ȳ, b̄ += ȳ
    c.accumulate(c.op.operands[0], c.g);
    c.accumulate(c.op.operands[1], c.g);
}
void vjp_sub(VjpContext &c) {  // ā += ȳ, b̄ -= ȳ
    c.accumulate(c.op.operands[0], c.g);
    c.accumulate(c.op.operands[1], neg(c, c.g));
}
void vjp_mul(VjpContext &c) {  // ā += ȳ·b, b̄ += ȳ·a
    c.accumulate(c.op.operands[0], mul(c, c.g, c.x(1)));
    c.accumulate(c.op.operands[1], mul(c, c.g, c.x(0)));
}
void vjp_div(VjpContext &c) {  // y = a/b: ā += ȳ/b, b̄ -= ȳ·y/b
    ValueId ga = div(c, c.g, c.x(1));
    c.accumulate(c.op.operands[0], ga);
    c.accumulate(c.op.operands[1], neg(c, mul(c, ga, c.y())));
}
void vjp_mod(VjpContext &c) {  // a % b = a − b·trunc(a/b): ā += ȳ, b̄ −= ȳ·trunc(a/b)
    ValueId q = div(c, c.x(0), c.x(1));
    ValueId nonneg = c.b.binary(OpKind::Ge, q, c.constant(0, q));
    ValueId trunc = select(c, nonneg, c.b.unary(OpKind::Floor, q), c.b.unary(OpKind::Ceil, q));
    c.accumulate(c.op.operands[0], c.g);
    c.accumulate(c.op.operands[1], neg(c, mul(c, c.g, trunc)));
}
void vjp_maximum(VjpContext &c) {  // ties go to a: ā += [a ≥ b]·ȳ, b̄ += [a < b]·ȳ
    ValueId pick_a = c.b.binary(OpKind::Ge, c.x(0), c.x(1));
    ValueId zero = c.constant(0, c.g);
    c.accumulate(c.op.operands[0], select(c, pick_a, c.g, zero));
    c.accumulate(c.op.operands[1], select(c, pick_a, zero, c.g));
}
void vjp_minimum(VjpContext &c) {  // ties go to a: ā += [a ≤ b]·ȳ, b̄ += [a > b]·ȳ
    ValueId pick_a = c.b.binary(OpKind::Le, c.x(0), c.x(1));
    ValueId zero = c.constant(0, c.g);
    c.accumulate(c.op.operands[0], select(c, pick_a, c.g, zero));
    c.accumulate(c.op.operands[1], select(c, pick_a, zero, c.g));
}
void vjp_neg(VjpContext &c) { c.accumulate(c.op.operands[0], neg(c, c.g)); }  // x̄ -= ȳ
void vjp_exp(VjpContext &c) { c.accumulate(c.op.operands[0], mul(c, c.g, c.y())); }  // x̄ += ȳ·eˣ
void vjp_exp2(VjpContext &c) {  // x̄ += ȳ·2ˣ·ln 2
    c.accumulate(c.op.operands[0], mul(c, mul(c, c.g, c.y()), c.constant(std::log(2.0), c.g)));
}
void vjp_log(VjpContext &c) { c.accumulate(c.op.operands[0], div(c, c.g, c.x(0))); }  // x̄ += ȳ/x
void vjp_log2(VjpContext &c) {  // x̄ += ȳ/(x·ln 2)
    c.accumulate(c.op.operands[0], div(c, c.g, mul(c, c.x(0), c.constant(std::log(2.0), c.g))));
}
void vjp_sqrt(VjpContext &c) {  // x̄ += ȳ/(2√x)
    c.accumulate(c.op.operands[0], div(c, c.g, mul(c, c.y(), c.constant(2.0, c.g))));
}
void vjp_rsqrt(VjpContext &c) {  // y = x^-½: x̄ += -½·ȳ·y³
    ValueId y = c.y();
    ValueId y3 = mul(c, mul(c, y, y), y);
    c.accumulate(c.op.operands[0], mul(c, mul(c, c.g, y3), c.constant(-0.5, c.g)));
}
void vjp_sigmoid(VjpContext &c) {  // x̄ += ȳ·y·(1−y)
    ValueId y = c.y();
    ValueId one_minus = c.b.binary(OpKind::Sub, c.constant(1.0, y), y);
    c.accumulate(c.op.operands[0], mul(c, mul(c, c.g, y), one_minus));
}
void vjp_abs(VjpContext &c) {  // x̄ += sign(x)·ȳ, sign(0) = 0
    ValueId x = c.x(0), zero = c.constant(0, x);
    ValueId pos = c.b.binary(OpKind::Gt, x, zero), negv = c.b.binary(OpKind::Lt, x, zero);
    ValueId gz = c.constant(0, c.g);
    c.accumulate(c.op.operands[0], select(c, pos, c.g, select(c, negv, neg(c, c.g), gz)));
}
void vjp_erf(VjpContext &c) {  // x̄ += ȳ·(2/√π)·e^(−x²)
    ValueId x = c.x(0);
    ValueId e = c.b.unary(OpKind::Exp, neg(c, mul(c, x, x)));
    c.accumulate(c.op.operands[0], mul(c, mul(c, c.g, e), c.constant(2.0 / std::sqrt(M_PI), c.g)));
}
void vjp_tanh(VjpContext &c) {  // x̄ += ȳ·(1−y²)
    ValueId y = c.y();
    ValueId d = c.b.binary(OpKind::Sub, c.constant(1.0, y), mul(c, y, y));
    c.accumulate(c.op.operands[0], mul(c, c.g, d));
}
void vjp_sin(VjpContext &c) {  // x̄ += ȳ·cos x
    c.accumulate(c.op.operands[0], mul(c, c.g, c.b.unary(OpKind::Cos, c.x(0))));
}
void vjp_cos(VjpContext &c) {  // x̄ -= ȳ·sin x
    c.accumulate(c.op.operands[0], neg(c, mul(c, c.g, c.b.unary(OpKind::Sin, c.x(0)))));
}
void vjp_where(VjpContext &c) {  // ā += [cond]·ȳ, b̄ += [¬cond]·ȳ
    ValueId zero = c.constant(0, c.g), cond = c.x(0);
    c.accumulate(c.op.operands[1], select(c, cond, c.g, zero));
    c.accumulate(c.op.operands[2], select(c, cond, zero, c.g));
}
void vjp_cast(VjpContext &c) {  // x̄ += cast(ȳ, dtype(x)) between float types
    const ir::Type &from = c.fwd.type(c.op.operands[0]);
    if (!from.is_float()) return;
    c.accumulate(c.op.operands[0], c.b.cast(c.g, from.elem));
}
void vjp_reduce_sum(VjpContext &c) {  // x̄ += broadcast(ȳ) along the reduced axis
    const ir::Type &xt = c.fwd.type(c.op.operands[0]);
    ValueId g = c.g;
    if (c.op.axis >= 0 && !c.op.keep_dims && xt.rank() > 1) g = c.b.expand_dims(g, c.op.axis);
    c.accumulate(c.op.operands[0], c.b.broadcast(g, xt.shape));
}
void vjp_reduce_extremum(VjpContext &c) {  // x̄ += ȳ·[x = y]/#{x = y}: ties share the gradient equally
    const ir::Type &xt = c.fwd.type(c.op.operands[0]);
    ValueId y = c.y(), g = c.g;
    if (c.op.axis >= 0 && !c.op.keep_dims && xt.rank() > 1) {
        y = c.b.expand_dims(y, c.op.axis);
        g = c.b.expand_dims(g, c.op.axis);
    }
    ValueId hit = c.b.binary(OpKind::Eq, c.x(0), c.b.broadcast(y, xt.shape));
    ValueId ones = c.b.where(hit, c.constant(1.0, c.x(0)), c.constant(0.0, c.x(0)));
    ValueId count = c.b.reduce(OpKind::ReduceSum, ones, c.op.axis, c.op.axis >= 0 && xt.rank() > 1);
    ValueId share = c.b.broadcast(div(c, g, c.b.cast(count, c.fwd.type(c.op.result).elem)), xt.shape);
    c.accumulate(c.op.operands[0], select(c, hit, share, c.constant(0, share)));
}

constexpr RuleClass D = RuleClass::Differentiable;
constexpr RuleClass N = RuleClass::NonDifferentiable;
constexpr RuleClass M = RuleClass::Memory;

}  // namespace

const std::vector<Rule> &rules() {
    static const std::vector<Rule> table = {
        {OpKind::Param, N, nullptr},        {OpKind::Const, N, nullptr},
        {OpKind::ProgramId, N, nullptr},    {OpKind::NumPrograms, N, nullptr},
        {OpKind::Arange, N, nullptr},       {OpKind::Broadcast, D, vjp_broadcast},
        {OpKind::ExpandDims, D, vjp_expand_dims},
        {OpKind::Add, D, vjp_add},          {OpKind::Sub, D, vjp_sub},
        {OpKind::Mul, D, vjp_mul},          {OpKind::Div, D, vjp_div},
        {OpKind::Mod, D, vjp_mod},
        {OpKind::Maximum, D, vjp_maximum},  {OpKind::Minimum, D, vjp_minimum},
        {OpKind::Lt, N, nullptr},           {OpKind::Le, N, nullptr},
        {OpKind::Gt, N, nullptr},           {OpKind::Ge, N, nullptr},
        {OpKind::Eq, N, nullptr},           {OpKind::Ne, N, nullptr},
        {OpKind::And, N, nullptr},          {OpKind::Or, N, nullptr},
        {OpKind::Xor, N, nullptr},          {OpKind::Neg, D, vjp_neg},
        {OpKind::Not, N, nullptr},          {OpKind::Exp, D, vjp_exp},
        {OpKind::Exp2, D, vjp_exp2},        {OpKind::Log, D, vjp_log},
        {OpKind::Log2, D, vjp_log2},        {OpKind::Sqrt, D, vjp_sqrt},
        {OpKind::Rsqrt, D, vjp_rsqrt},      {OpKind::Sigmoid, D, vjp_sigmoid},
        {OpKind::Abs, D, vjp_abs},          {OpKind::Erf, D, vjp_erf},
        {OpKind::Tanh, D, vjp_tanh},        {OpKind::Sin, D, vjp_sin},
        {OpKind::Cos, D, vjp_cos},
        {OpKind::Floor, N, nullptr},        {OpKind::Ceil, N, nullptr},  // zero gradient almost everywhere
        {OpKind::Where, D, vjp_where},      {OpKind::Cast, D, vjp_cast},
        {OpKind::AddPtr, N, nullptr},       // pointers get shadows, not adjoints
        {OpKind::ReduceSum, D, vjp_reduce_sum},
        {OpKind::ReduceMax, D, vjp_reduce_extremum}, {OpKind::ReduceMin, D, vjp_reduce_extremum},
        {OpKind::Load, M, nullptr},         {OpKind::Store, M, nullptr},
        {OpKind::AtomicAdd, M, nullptr},
    };
    return table;
}

const Rule *rule_for(OpKind kind) {
    for (const Rule &r : rules())
        if (r.kind == kind) return &r;
    return nullptr;
}

}  // namespace tad::ad

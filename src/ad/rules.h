// The derivative rules: one entry per IR op kind in one table (rules()), the math of each rule in a
// one-line comment beside its entry in rules.cpp. A differentiable op's entry serves both modes: its
// reverse-mode rule (vjp, used by reverse.h) and its forward-mode rule (jvp, used by forward.h).
// tests/ad checks that every OpKind has an entry and, with the dot-product test
// <J v, u> = <v, Jᵀ u>, that the two agree.
//
// Most rules are written once, by their shape (as JAX's ad.py and Enzyme do):
// - unary: an elementwise op y = f(x) has a diagonal Jacobian, so one slope function t ↦ f'(x)·t
//   gives both ẏ = f'(x)·ẋ and x̄ += f'(x)·ȳ.
// - linear: the op is its own tangent (replayed on the operands' tangents), and a transpose
//   function gives the operands' cotangents from ȳ (broadcast ↔ unbroadcast, expand_dims ↔ sum, ...).
// - bilinear: y = a ⊙ b, linear in each operand: one slope per operand (t ↦ t·b, t ↦ t·a) gives
//   ẏ = ȧ·b + a·ḃ and ā += ȳ·b, b̄ += ȳ·a.
// The rest (ties, divisions, reductions to an extremum, dot with its dtype casts) are hand-written
// vjp/jvp pairs.
#pragma once

#include <functional>
#include <vector>

#include "ir/ir.h"

namespace tad::ad {

// What every rule sees, in either mode: the forward op being differentiated and the function its
// derivative is appended to.
struct RuleContext {
    ir::Builder &b;  // appends to the derived function (backward or tangent)
    const ir::Function &fwd;
    const ir::Op &op;  // the forward op
    std::function<ir::ValueId(ir::ValueId)> primal;  // forward value -> its replay in the derived function

    ir::ValueId x(size_t i) const { return primal(op.operands[i]); }
    ir::ValueId y() const { return primal(op.result); }
    ir::ValueId constant(double v, ir::ValueId like);  // scalar broadcast to like's shape and type
};

// Reverse mode: the rule adds each operand's share of ȳ to that operand's adjoint.
struct VjpContext : RuleContext {
    ir::ValueId g;  // ȳ: adjoint of op.result (a derived value)
    std::function<void(ir::ValueId, ir::ValueId)> accumulate;  // (forward operand, contribution)
};

// Forward mode: the rule is called only when the result is a float and at least one operand has a
// nonzero tangent; it sets `result` (kNoValue: the tangent is zero).
struct JvpContext : RuleContext {
    std::vector<ir::ValueId> dx;  // tangent of each operand; kNoValue where it is zero
    ir::ValueId result = ir::kNoValue;  // tangent of op.result, of op.result's type
};

enum class RuleClass {
    Differentiable,  // has a vjp and a jvp
    NonDifferentiable,  // integer / boolean / piecewise-constant: no gradient flows
    Memory,  // loads and stores: handled by the reverse and forward passes themselves
    Control,  // loop structure: handled by the passes (reverse.cpp reverses whole loops)
};

// How a differentiable rule is written (see the top of this file).
enum class RuleShape { None, Unary, Linear, Bilinear, HandWritten };

// t ↦ ∂y/∂x·t for an operand x with a diagonal Jacobian: applied to ẋ it gives x's term of ẏ,
// applied to ȳ it gives x's share of x̄.
using Slope = ir::ValueId (*)(RuleContext &, ir::ValueId t);
// ȳ ↦ the operands' cotangents, through c.accumulate: the transpose of a linear op.
using Transpose = void (*)(VjpContext &);

struct Rule {
    ir::OpKind kind;
    RuleClass cls;
    RuleShape shape = RuleShape::None;
    std::function<void(VjpContext &)> vjp;  // empty unless Differentiable
    std::function<void(JvpContext &)> jvp;  // empty unless Differentiable
};

const std::vector<Rule> &rules();
const Rule *rule_for(ir::OpKind kind);

// Sums `g` over the dims that a broadcast from `shape` stretched, giving a value of `shape`.
ir::ValueId unbroadcast(ir::Builder &b, ir::ValueId g, const std::vector<ir::Dim> &shape);

}  // namespace tad::ad

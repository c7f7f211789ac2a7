// The derivative rules: one entry per IR op kind, with the math in a one-line comment beside each
// rule in rules.cpp. A differentiable op has both its reverse-mode rule (vjp, used by reverse.h) and
// its forward-mode rule (jvp, used by forward.h) in the same entry. tests/ad checks that every
// OpKind has an entry and, with the dot-product test <J v, u> = <v, Jᵀ u>, that the two agree.
#pragma once

#include <functional>
#include <vector>

#include "ir/ir.h"

namespace tad::ad {

// What a rule sees while the reverse sweep visits one forward op.
struct VjpContext {
    ir::Builder &b;  // appends to the backward function
    const ir::Function &fwd;
    const ir::Op &op;  // the forward op
    std::function<ir::ValueId(ir::ValueId)> primal;  // forward value -> its replay in the backward
    ir::ValueId g;  // adjoint of op.result (backward value)
    std::function<void(ir::ValueId, ir::ValueId)> accumulate;  // (forward operand, contribution)

    ir::ValueId x(size_t i) const { return primal(op.operands[i]); }
    ir::ValueId y() const { return primal(op.result); }
    ir::ValueId constant(double v, ir::ValueId like);  // scalar broadcast to like's shape and type
};

// What a rule sees while forward mode visits one forward op. The rule is called only when the
// result is a float and at least one operand has a nonzero tangent; it sets `result`.
struct JvpContext {
    ir::Builder &b;  // appends to the tangent function
    const ir::Function &fwd;
    const ir::Op &op;  // the forward op
    std::function<ir::ValueId(ir::ValueId)> primal;  // forward value -> its replay in the tangent function
    std::vector<ir::ValueId> dx;  // tangent of each operand; kNoValue where it is zero
    ir::ValueId result = ir::kNoValue;  // tangent of op.result, of op.result's type

    ir::ValueId x(size_t i) const { return primal(op.operands[i]); }
    ir::ValueId y() const { return primal(op.result); }
    ir::ValueId constant(double v, ir::ValueId like);  // scalar broadcast to like's shape and type
};

enum class RuleClass {
    Differentiable,  // has a vjp and a jvp
    NonDifferentiable,  // integer / boolean / piecewise-constant: no gradient flows
    Memory,  // loads and stores: handled by the reverse and forward passes themselves
    Control,  // loop structure: handled by the passes (reverse.cpp reverses whole loops)
};

struct Rule {
    ir::OpKind kind;
    RuleClass cls;
    void (*vjp)(VjpContext &);  // null unless Differentiable
    void (*jvp)(JvpContext &);  // null unless Differentiable
};

const std::vector<Rule> &rules();
const Rule *rule_for(ir::OpKind kind);

// Sums `g` over the dims that a broadcast from `shape` stretched, giving a value of `shape`.
ir::ValueId unbroadcast(ir::Builder &b, ir::ValueId g, const std::vector<ir::Dim> &shape);

}  // namespace tad::ad

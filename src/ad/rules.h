// The derivative rules: one entry per IR op kind, with the math in a one-line comment beside each
// rule in rules.cpp. tests/ad checks that every OpKind has an entry.
#pragma once

#include <functional>
#include <vector>

#include "ir/ir.h"

namespace tad::ad {

// What a rule sees while the reverse sweep visits one forward op.
struct VjpContext {
    ir::Builder &b;                                    // appends to the backward function
    const ir::Function &fwd;
    const ir::Op &op;                                  // the forward op
    std::function<ir::ValueId(ir::ValueId)> primal;    // forward value -> its replay in the backward
    ir::ValueId g;                                     // adjoint of op.result (backward value)
    std::function<void(ir::ValueId, ir::ValueId)> accumulate;  // (forward operand, contribution)

    ir::ValueId x(size_t i) const { return primal(op.operands[i]); }
    ir::ValueId y() const { return primal(op.result); }
    ir::ValueId constant(double v, ir::ValueId like);  // scalar broadcast to like's shape and type
};

enum class RuleClass {
    Differentiable,     // has a vjp
    NonDifferentiable,  // integer / boolean / piecewise-constant: no gradient flows
    Memory,             // loads and stores: handled by the reverse pass itself
};

struct Rule {
    ir::OpKind kind;
    RuleClass cls;
    void (*vjp)(VjpContext &);  // null unless Differentiable
};

const std::vector<Rule> &rules();
const Rule *rule_for(ir::OpKind kind);

// Sums `g` over the dims that a broadcast from `shape` stretched, giving a value of `shape`.
ir::ValueId unbroadcast(ir::Builder &b, ir::ValueId g, const std::vector<ir::Dim> &shape);

}  // namespace tad::ad

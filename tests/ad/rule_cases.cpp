#include "rule_cases.h"

#include <stdexcept>

namespace tad::testing {

using ir::Dim;
using ir::DType;
using ir::OpKind;
using ir::ValueId;

namespace {

// Row-major offsets of a tile of `shape` (rank 0, 1 or 2).
ValueId offsets(ir::Builder &b, std::vector<Dim> shape) {
    if (shape.empty()) return b.constant(0, DType::I32);
    if (shape.size() == 1) return b.arange(0, shape[0].value, shape[0].expr);
    ValueId r = b.expand_dims(b.arange(0, shape[0].value, shape[0].expr), 1);
    ValueId c = b.expand_dims(b.arange(0, shape[1].value, shape[1].expr), 0);
    ValueId stride = b.constant(static_cast<double>(shape[1].value), DType::I32);
    ValueId rs = b.binary(OpKind::Mul, r, b.broadcast(stride, b.func().type(r).shape));
    return b.binary(OpKind::Add, b.broadcast(rs, shape), b.broadcast(c, shape));
}

ValueId at(ir::Builder &b, ValueId ptr, std::vector<Dim> shape) {
    ValueId off = offsets(b, shape);
    return b.add_ptr(b.broadcast(ptr, shape), off);
}

const Dim R{4, "R"}, C{8, "C"}, One{1, "1"}, Two{2, "2"};

ValueId un(ir::Builder &b, OpKind k, ValueId x) { return b.unary(k, x); }
ValueId bin(ir::Builder &b, OpKind k, ValueId x, ValueId y) { return b.binary(k, x, y); }

}  // namespace

ir::Function rule_kernel(const RuleCase &c) {
    ir::Function f;
    f.name = "rule_" + c.name;
    f.source_path = "rule_cases.cpp";
    ir::Builder b(f);
    std::vector<ValueId> ptrs, xs;
    for (size_t i = 0; i < c.inputs.size(); ++i)
        ptrs.push_back(b.param("X" + std::to_string(i), ir::ParamKind::Pointer, ir::Type{DType::F32, true, {}}));
    ValueId Y = b.param("Y", ir::ParamKind::Pointer, ir::Type{DType::F32, true, {}});
    for (size_t i = 0; i < c.inputs.size(); ++i) {
        ValueId x = b.load(at(b, ptrs[i], c.inputs[i]), ir::kNoValue, ir::kNoValue);
        f.values[x].name = "x" + std::to_string(i);
        xs.push_back(x);
    }
    ValueId y = c.body(b, xs);
    f.values[y].name = "y";
    b.store(at(b, Y, f.type(y).shape), y, ir::kNoValue);
    return f;
}

const std::vector<RuleCase> &rule_cases() {
    using B = ir::Builder;
    using V = const std::vector<ValueId> &;
    static const std::vector<RuleCase> cases = {
        {"broadcast",
         {{R, One}},
         -1,
         1,
         [](B &b, V x) {
             return b.broadcast(x[0], {R, C});
         }},
        {"expand_dims",
         {{C}},
         -1,
         1,
         [](B &b, V x) {
             return b.broadcast(b.expand_dims(x[0], 0), {R, C});
         }},
        {"add", {{C}, {C}}, -1, 1, [](B &b, V x) { return bin(b, OpKind::Add, x[0], x[1]); }},
        {"sub", {{C}, {C}}, -1, 1, [](B &b, V x) { return bin(b, OpKind::Sub, x[0], x[1]); }},
        {"mul", {{C}, {C}}, -1, 1, [](B &b, V x) { return bin(b, OpKind::Mul, x[0], x[1]); }},
        {"div", {{C}, {C}}, 0.5, 2, [](B &b, V x) { return bin(b, OpKind::Div, x[0], x[1]); }},
        {"mod",
         {{C}, {C}},
         0.7,
         1.3,
         [](B &b, V x) {
             ValueId three = b.broadcast(b.constant(3, DType::F32), {C});
             return bin(b, OpKind::Mod, bin(b, OpKind::Mul, x[0], three), x[1]);
         }},
        {"maximum", {{C}, {C}}, -1, 1, [](B &b, V x) { return bin(b, OpKind::Maximum, x[0], x[1]); }},
        {"minimum", {{C}, {C}}, -1, 1, [](B &b, V x) { return bin(b, OpKind::Minimum, x[0], x[1]); }},
        {"pow", {{C}, {C}}, 0.5, 2, [](B &b, V x) { return bin(b, OpKind::Pow, x[0], x[1]); }},
        {"neg", {{C}}, -1, 1, [](B &b, V x) { return un(b, OpKind::Neg, x[0]); }},
        {"exp", {{C}}, -1, 1, [](B &b, V x) { return un(b, OpKind::Exp, x[0]); }},
        {"exp2", {{C}}, -1, 1, [](B &b, V x) { return un(b, OpKind::Exp2, x[0]); }},
        {"log", {{C}}, 0.5, 2, [](B &b, V x) { return un(b, OpKind::Log, x[0]); }},
        {"log2", {{C}}, 0.5, 2, [](B &b, V x) { return un(b, OpKind::Log2, x[0]); }},
        {"sqrt", {{C}}, 0.5, 2, [](B &b, V x) { return un(b, OpKind::Sqrt, x[0]); }},
        {"rsqrt", {{C}}, 0.5, 2, [](B &b, V x) { return un(b, OpKind::Rsqrt, x[0]); }},
        {"sigmoid", {{C}}, -2, 2, [](B &b, V x) { return un(b, OpKind::Sigmoid, x[0]); }},
        {"abs", {{C}}, -1, 1, [](B &b, V x) { return un(b, OpKind::Abs, x[0]); }},
        {"erf", {{C}}, -1, 1, [](B &b, V x) { return un(b, OpKind::Erf, x[0]); }},
        {"tanh", {{C}}, -1, 1, [](B &b, V x) { return un(b, OpKind::Tanh, x[0]); }},
        {"sin", {{C}}, -1, 1, [](B &b, V x) { return un(b, OpKind::Sin, x[0]); }},
        {"cos", {{C}}, -1, 1, [](B &b, V x) { return un(b, OpKind::Cos, x[0]); }},
        {"log1p", {{C}}, -0.5, 1, [](B &b, V x) { return un(b, OpKind::Log1p, x[0]); }},
        {"expm1", {{C}}, -1, 1, [](B &b, V x) { return un(b, OpKind::Expm1, x[0]); }},
        {"tan", {{C}}, -1, 1, [](B &b, V x) { return un(b, OpKind::Tan, x[0]); }},
        {"atan", {{C}}, -2, 2, [](B &b, V x) { return un(b, OpKind::Atan, x[0]); }},
        {"sinh", {{C}}, -1, 1, [](B &b, V x) { return un(b, OpKind::Sinh, x[0]); }},
        {"cosh", {{C}}, -1, 1, [](B &b, V x) { return un(b, OpKind::Cosh, x[0]); }},
        {"asin", {{C}}, -0.8, 0.8, [](B &b, V x) { return un(b, OpKind::Asin, x[0]); }},
        {"acos", {{C}}, -0.8, 0.8, [](B &b, V x) { return un(b, OpKind::Acos, x[0]); }},
        {"where",
         {{C}, {C}},
         -1,
         1,
         [](B &b, V x) {
             ValueId zero = b.broadcast(b.constant(0, DType::F32), {C});
             return b.where(b.binary(OpKind::Gt, x[0], zero), x[0], x[1]);
         }},
        {"cast", {{C}}, -1, 1, [](B &b, V x) { return b.cast(b.cast(x[0], DType::F64), DType::F32); }},
        {"trans", {{R, C}}, -1, 1, [](B &b, V x) { return b.trans(x[0]); }},
        {"reshape",
         {{R, C}},
         -1,
         1,
         [](B &b, V x) {
             return b.reshape(x[0], {C, R});
         }},
        {"join", {{C}, {C}}, -1, 1, [](B &b, V x) { return b.join(x[0], x[1]); }},
        // Valued x0·x1, differentiated through x1·x0: the same function, so the finite differences
        // hold exactly when the gradient goes to the surrogate alone (to both, it would double).
        {"grad_via",
         {{C}, {C}},
         -1,
         1,
         [](B &b, V x) {
             ValueId value = bin(b, OpKind::Mul, x[0], x[1]), surrogate = bin(b, OpKind::Mul, x[1], x[0]);
             return b.append(ir::Op(OpKind::GradVia, {value, surrogate}), b.func().type(value));
         }},
        // x0·x1 replayed as x1·x0 (the same value): the gradient is x0·x1's, none goes to the stand-in.
        {"replay_as",
         {{C}, {C}},
         -1,
         1,
         [](B &b, V x) {
             ValueId value = bin(b, OpKind::Mul, x[0], x[1]), stand_in = bin(b, OpKind::Mul, x[1], x[0]);
             return b.append(ir::Op(OpKind::ReplayAs, {value, stand_in}), b.func().type(value));
         }},
        // Both halves, with different signs, so that swapping them shows.
        {"split", {{C, Two}}, -1, 1, [](B &b, V x) { return bin(b, OpKind::Sub, b.split(x[0], 0), b.split(x[0], 1)); }},
        {"dot", {{R, C}, {C, R}}, -1, 1, [](B &b, V x) { return b.dot(x[0], x[1], DType::F32, ""); }},
        {"reduce_sum", {{R, C}}, -1, 1, [](B &b, V x) { return b.reduce(OpKind::ReduceSum, x[0], 1, false); }},
        {"reduce_sum_keep", {{R, C}}, -1, 1, [](B &b, V x) { return b.reduce(OpKind::ReduceSum, x[0], 0, true); }},
        {"reduce_max", {{R, C}}, -1, 1, [](B &b, V x) { return b.reduce(OpKind::ReduceMax, x[0], 1, false); }},
        {"reduce_min", {{R, C}}, -1, 1, [](B &b, V x) { return b.reduce(OpKind::ReduceMin, x[0], 0, false); }},
        {"cumsum", {{R, C}}, -1, 1, [](B &b, V x) { return b.cumsum(x[0], 1, false); }},
        {"cumsum_reverse", {{R, C}}, -1, 1, [](B &b, V x) { return b.cumsum(x[0], 0, true); }},
        // Non-differentiable indices scaling a differentiable value: the gradient flows around them.
        {"argmax",
         {{R, C}},
         -1,
         1,
         [](B &b, V x) {
             ValueId i = b.cast(b.reduce(OpKind::Argmax, x[0], 1, true), DType::F32);
             return bin(b, OpKind::Mul, x[0], b.broadcast(i, {R, C}));
         }},
        {"argmin",
         {{R, C}},
         -1,
         1,
         [](B &b, V x) {
             ValueId i = b.cast(b.reduce(OpKind::Argmin, x[0], 0, false), DType::F32);
             return bin(b, OpKind::Mul, b.reduce(OpKind::ReduceSum, x[0], 0, false), i);
         }},
    };
    return cases;
}

const RuleCase &rule_case(const std::string &name) {
    for (const RuleCase &c : rule_cases())
        if (c.name == name) return c;
    throw std::out_of_range("no rule case " + name);
}

}  // namespace tad::testing

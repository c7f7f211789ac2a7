// Goldens of the rules themselves: each case is one forward op on parameters, and its golden
// (tests/ad/golden/rules/<case>.txt) shows only the ops that the rule's vjp and jvp append, as they
// build them (before cse and dce):
//
//   forward(%0 = x0: f32[C], ...):     the op, replayed in the derived function
//   vjp(%3 = dy):                      the vjp's ops given the cotangent dy, then "x0 += %v" per
//                                      contribution it accumulates
//   jvp(%3 = dx0, %4 = dx1):           the jvp's ops given the operands' tangents, then "dy = %v"
//   jvp(%3 = dx0, dx1 = 0):            (an operand with a zero tangent), one section per operand
//
// The kernels around the rules (seeding, gradient writes, shadows) have their own goldens
// (reverse_golden_test.cpp, forward_test.cpp), so that a change there does not rewrite these.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <sstream>

#include "../common/golden.h"
#include "ad/replay.h"
#include "ad/rules.h"

using namespace tad;
using ir::Dim;
using ir::DType;
using ir::OpKind;
using ir::ValueId;

namespace {

struct OpCase {
    std::string name;
    std::vector<ir::Type> operands;  // parameters x0, x1, ...
    std::function<ValueId(ir::Builder &, const std::vector<ValueId> &)> op;  // builds the one op under test
};

const Dim R{4, "R"}, C{8, "C"}, One{1, "1"}, Two{2, "2"};
ir::Type f32(std::vector<Dim> shape) { return ir::Type{DType::F32, false, std::move(shape)}; }
ir::Type of(DType t, std::vector<Dim> shape) { return ir::Type{t, false, std::move(shape)}; }

using B = ir::Builder;
using V = const std::vector<ValueId> &;

OpCase unary(const std::string &name, OpKind k) {
    return {name, {f32({C})}, [k](B &b, V x) { return b.unary(k, x[0]); }};
}
OpCase binary(const std::string &name, OpKind k) {
    return {name, {f32({C}), f32({C})}, [k](B &b, V x) { return b.binary(k, x[0], x[1]); }};
}
OpCase reduce(const std::string &name, OpKind k, int axis, bool keep) {
    return {name, {f32({R, C})}, [=](B &b, V x) { return b.reduce(k, x[0], axis, keep); }};
}

const std::vector<OpCase> &op_cases() {
    static const std::vector<OpCase> cases = {
        {"broadcast",
         {f32({R, One})},
         [](B &b, V x) {
             return b.broadcast(x[0], {R, C});
         }},
        {"broadcast_rank",
         {f32({C})},
         [](B &b, V x) {
             return b.broadcast(x[0], {R, C});
         }},
        {"expand_dims", {f32({C})}, [](B &b, V x) { return b.expand_dims(x[0], 0); }},
        binary("add", OpKind::Add),
        binary("sub", OpKind::Sub),
        binary("mul", OpKind::Mul),
        binary("div", OpKind::Div),
        binary("mod", OpKind::Mod),
        binary("maximum", OpKind::Maximum),
        binary("minimum", OpKind::Minimum),
        binary("pow", OpKind::Pow),
        unary("neg", OpKind::Neg),
        unary("exp", OpKind::Exp),
        unary("exp2", OpKind::Exp2),
        unary("log", OpKind::Log),
        unary("log2", OpKind::Log2),
        unary("sqrt", OpKind::Sqrt),
        unary("rsqrt", OpKind::Rsqrt),
        unary("sigmoid", OpKind::Sigmoid),
        unary("abs", OpKind::Abs),
        unary("erf", OpKind::Erf),
        unary("tanh", OpKind::Tanh),
        unary("sin", OpKind::Sin),
        unary("cos", OpKind::Cos),
        unary("log1p", OpKind::Log1p),
        unary("expm1", OpKind::Expm1),
        unary("tan", OpKind::Tan),
        unary("atan", OpKind::Atan),
        unary("sinh", OpKind::Sinh),
        unary("cosh", OpKind::Cosh),
        unary("asin", OpKind::Asin),
        unary("acos", OpKind::Acos),
        {"where", {of(DType::I1, {C}), f32({C}), f32({C})}, [](B &b, V x) { return b.where(x[0], x[1], x[2]); }},
        {"cast", {f32({C})}, [](B &b, V x) { return b.cast(x[0], DType::F64); }},
        {"cast_like", {f32({C}), of(DType::F16, {C})}, [](B &b, V x) { return b.cast_like(x[0], x[1]); }},
        {"cast_int", {of(DType::I32, {C})}, [](B &b, V x) { return b.cast(x[0], DType::F32); }},
        {"trans", {f32({R, C})}, [](B &b, V x) { return b.trans(x[0]); }},
        {"reshape",
         {f32({R, C})},
         [](B &b, V x) {
             return b.reshape(x[0], {C, R});
         }},
        {"join", {f32({C}), f32({C})}, [](B &b, V x) { return b.join(x[0], x[1]); }},
        {"grad_via",
         {f32({C}), f32({C})},
         [](B &b, V x) {
             return b.append(ir::Op(OpKind::GradVia, {x[0], x[1]}), b.func().type(x[0]));
         }},
        {"replay_as",
         {f32({C}), f32({C})},
         [](B &b, V x) {
             return b.append(ir::Op(OpKind::ReplayAs, {x[0], x[1]}), b.func().type(x[0]));
         }},
        {"split0", {f32({C, Two})}, [](B &b, V x) { return b.split(x[0], 0); }},
        {"split1", {f32({C, Two})}, [](B &b, V x) { return b.split(x[0], 1); }},
        {"dot", {f32({R, C}), f32({C, R})}, [](B &b, V x) { return b.dot(x[0], x[1], DType::F32, ""); }},
        {"dot_f16",
         {of(DType::F16, {R, C}), of(DType::F16, {C, R})},
         [](B &b, V x) { return b.dot(x[0], x[1], DType::F32, "tf32"); }},
        reduce("reduce_sum", OpKind::ReduceSum, 1, false),
        reduce("reduce_sum_keep", OpKind::ReduceSum, 0, true),
        reduce("reduce_sum_all", OpKind::ReduceSum, -1, false),
        reduce("reduce_max", OpKind::ReduceMax, 1, false),
        reduce("reduce_max_keep", OpKind::ReduceMax, 1, true),
        reduce("reduce_min", OpKind::ReduceMin, 0, false),
        reduce("reduce_min_all", OpKind::ReduceMin, -1, false),
        {"cumsum", {f32({R, C})}, [](B &b, V x) { return b.cumsum(x[0], 1, false); }},
        {"cumsum_reverse", {f32({R, C})}, [](B &b, V x) { return b.cumsum(x[0], 0, true); }},
    };
    return cases;
}

// The forward function of a case: parameters x0, x1, ..., then the op, its result named y.
ir::Function forward_of(const OpCase &c) {
    ir::Function f;
    f.name = c.name;
    ir::Builder b(f);
    std::vector<ValueId> xs;
    for (size_t i = 0; i < c.operands.size(); ++i)
        xs.push_back(b.param("x" + std::to_string(i), ir::ParamKind::Float, c.operands[i]));
    f.values[c.op(b, xs)].name = "y";
    return f;
}

// The lines ir::print gives the ops [from, end) of `f` (no loops here: one line per op).
std::string op_lines(const ir::Function &f, size_t from) {
    std::istringstream in(ir::print(f));
    std::string line, out;
    while (std::getline(in, line)) {
        if (line.rfind("  %", 0) != 0) continue;  // the signature, the closing brace
        const ir::ValueId v = std::stoi(line.substr(3));
        if (f.def(v).kind == OpKind::Param || f.values[v].def_op < static_cast<int>(from)) continue;
        out += line + "\n";
    }
    return out;
}

// A derived function as the modes build one: the forward's parameters, then the replay of its op.
struct Derived {
    ir::Function fn;
    ir::Builder b{fn};
    std::vector<ValueId> primal;
    ValueId param(const std::string &name, const ir::Type &t) { return b.param(name, ir::ParamKind::Float, t); }
};

void start(Derived &d, const ir::Function &fwd) {
    d.primal.assign(fwd.values.size(), ir::kNoValue);
    for (const ir::Param &p : fwd.params) d.primal[p.value] = d.param(p.name, fwd.type(p.value));
    ad::replay_op(d.b, fwd, fwd.ops.back(), d.primal);
}

std::string operand_name(const ir::Op &op, ValueId v) {
    for (size_t i = 0; i < op.operands.size(); ++i)
        if (op.operands[i] == v) return "x" + std::to_string(i);
    return "?";
}

std::string forward_section(const ir::Function &fwd) {
    Derived d;
    start(d, fwd);
    std::string s = "forward(";
    for (size_t i = 0; i < fwd.params.size(); ++i)
        s += (i ? ", %" : "%") + std::to_string(i) + " = " + fwd.params[i].name + ": " +
             fwd.type(fwd.params[i].value).str();
    return s + "):\n" + op_lines(d.fn, fwd.params.size());
}

// A section of a golden: its head line, the ops the rule appended, then what it gave back.
struct Section {
    std::string head, ops, result;
    std::string str() const { return head + ops + result; }
};

Section vjp_section(const ad::Rule &rule, const ir::Function &fwd) {
    const ir::Op &op = fwd.ops.back();
    Derived d;
    start(d, fwd);
    ValueId dy = d.param("dy", fwd.type(op.result));
    size_t from = d.fn.ops.size();
    std::string accumulated;
    ad::VjpContext ctx{{d.b, fwd, op, [&](ValueId v) { return d.primal.at(v); }}, dy, [&](ValueId v, ValueId g) {
                           accumulated += "  " + operand_name(op, v) + " += %" + std::to_string(g) + "\n";
                       }};
    rule.vjp(ctx);
    return {"vjp(%" + std::to_string(dy) + " = dy):\n", op_lines(d.fn, from), accumulated};
}

// Forward mode with tangents on the float operands in `active` (the others' are zero).
Section jvp_section(const ad::Rule &rule, const ir::Function &fwd, const std::set<size_t> &active) {
    const ir::Op &op = fwd.ops.back();
    Derived d;
    start(d, fwd);
    std::vector<ValueId> dx(op.operands.size(), ir::kNoValue);
    std::string head;
    for (size_t i = 0; i < op.operands.size(); ++i) {
        if (!fwd.type(op.operands[i]).is_float()) continue;
        std::string name = "dx" + std::to_string(i);
        if (active.count(i)) dx[i] = d.param(name, fwd.type(op.operands[i]));
        head +=
            (head.empty() ? "" : ", ") + (active.count(i) ? "%" + std::to_string(dx[i]) + " = " + name : name + " = 0");
    }
    size_t from = d.fn.ops.size();
    ad::JvpContext ctx{{d.b, fwd, op, [&](ValueId v) { return d.primal.at(v); }}, dx};
    rule.jvp(ctx);
    std::string result = ctx.result == ir::kNoValue ? "0" : "%" + std::to_string(ctx.result);
    return {"jvp(" + head + "):\n", op_lines(d.fn, from), "  dy = " + result + "\n"};
}

std::string rule_golden(const OpCase &c) {
    ir::Function fwd = forward_of(c);
    const ir::Op &op = fwd.ops.back();
    const ad::Rule *rule = ad::rule_for(op.kind);
    std::string out = forward_section(fwd) + vjp_section(*rule, fwd).str();
    std::vector<size_t> floats;
    for (size_t i = 0; i < op.operands.size(); ++i)
        if (fwd.type(op.operands[i]).is_float()) floats.push_back(i);
    if (floats.empty()) return out + "jvp: no operand carries a tangent\n";
    out += jvp_section(*rule, fwd, std::set<size_t>(floats.begin(), floats.end())).str();
    if (floats.size() > 1)
        for (size_t i : floats) out += jvp_section(*rule, fwd, {i}).str();
    return out;
}

class RuleGolden : public ::testing::TestWithParam<size_t> {};

TEST_P(RuleGolden, VjpAndJvpOps) {
    const OpCase &c = op_cases()[GetParam()];
    tad::testing::expect_golden("ad/golden/rules/" + c.name + ".txt", rule_golden(c));
}

INSTANTIATE_TEST_SUITE_P(AllRules, RuleGolden, ::testing::Range<size_t>(0, op_cases().size()),
                         [](const auto &info) { return op_cases()[info.param].name; });

TEST(Rules, EveryDifferentiableRuleHasAGolden) {
    std::set<OpKind> covered;
    for (const OpCase &c : op_cases()) covered.insert(forward_of(c).ops.back().kind);
    for (const ad::Rule &r : ad::rules())
        if (r.cls == ad::RuleClass::Differentiable) {
            EXPECT_TRUE(covered.count(r.kind)) << ir::op_name(r.kind);
        }
}

// One slope serves both modes: a unary rule's vjp and jvp append the same ops.
TEST(Rules, UnaryRulesBuildTheSameOpsInBothModes) {
    for (const OpCase &c : op_cases()) {
        ir::Function fwd = forward_of(c);
        const ad::Rule *rule = ad::rule_for(fwd.ops.back().kind);
        if (rule->shape != ad::RuleShape::Unary) continue;
        EXPECT_EQ(vjp_section(*rule, fwd).ops, jvp_section(*rule, fwd, {0}).ops) << c.name;
    }
}

}  // namespace

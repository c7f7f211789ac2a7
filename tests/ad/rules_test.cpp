#include <gtest/gtest.h>

#include <set>

#include "../common/golden.h"
#include "ad/reverse.h"
#include "ad/rules.h"
#include "rule_cases.h"

using namespace tad;

TEST(Rules, EveryOpKindHasExactlyOneEntry) {
    std::set<int> seen;
    for (const ad::Rule &r : ad::rules()) {
        EXPECT_TRUE(seen.insert(static_cast<int>(r.kind)).second) << "duplicate rule for " << ir::op_name(r.kind);
        EXPECT_EQ(r.vjp != nullptr, r.cls == ad::RuleClass::Differentiable) << ir::op_name(r.kind);
        EXPECT_EQ(r.jvp != nullptr, r.cls == ad::RuleClass::Differentiable) << ir::op_name(r.kind);
    }
    for (int k = 0; k <= static_cast<int>(ir::OpKind::LoopResult); ++k)
        EXPECT_TRUE(seen.count(k)) << "no rule for op " << ir::op_name(static_cast<ir::OpKind>(k));
}

TEST(Rules, EveryDifferentiableRuleHasACase) {
    std::set<std::string> covered;
    for (const auto &c : tad::testing::rule_cases()) {
        ir::Function f = tad::testing::rule_kernel(c);
        for (const ir::Op &op : f.ops) covered.insert(ir::op_name(op.kind));
    }
    for (const ad::Rule &r : ad::rules())
        if (r.cls == ad::RuleClass::Differentiable) {
            EXPECT_TRUE(covered.count(ir::op_name(r.kind))) << ir::op_name(r.kind);
        }
}

class RuleGolden : public ::testing::TestWithParam<size_t> {};

TEST_P(RuleGolden, BackwardIR) {
    const auto &c = tad::testing::rule_cases()[GetParam()];
    ir::Function f = tad::testing::rule_kernel(c);
    ad::GradSpec spec;
    for (size_t i = 0; i < c.inputs.size(); ++i) spec.wrt.push_back("X" + std::to_string(i));
    spec.outputs = {"Y"};
    auto plan = passes::plan_gradient_writes(passes::cse(f), spec.wrt, spec.outputs);
    ad::Backward bwd = ad::reverse(passes::cse(f), spec, plan, f.name + "_bwd");
    tad::testing::expect_golden("ad/golden/" + c.name + ".ir", ir::print(bwd.fn));
}

INSTANTIATE_TEST_SUITE_P(AllRules, RuleGolden, ::testing::Range<size_t>(0, tad::testing::rule_cases().size()),
                         [](const auto &info) { return tad::testing::rule_cases()[info.param].name; });

// The rules table is complete: every op kind has one entry, every differentiable one a shape, a
// numeric case (rule_cases.h) and a golden (rule_golden_test.cpp).
#include <gtest/gtest.h>

#include <set>

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

TEST(Rules, EveryDifferentiableRuleHasAShape) {
    for (const ad::Rule &r : ad::rules())
        EXPECT_EQ(r.shape != ad::RuleShape::None, r.cls == ad::RuleClass::Differentiable) << ir::op_name(r.kind);
}

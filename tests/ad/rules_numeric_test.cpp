// Each rule's backward, run on the interpreter in float64, against central finite differences.
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"

using namespace tad;
using namespace tad::testing;

namespace {

class RuleNumeric : public ::testing::TestWithParam<size_t> {};

TEST_P(RuleNumeric, MatchesCentralDifferences) {
    const RuleCase &c = rule_cases()[GetParam()];
    std::mt19937_64 rng(GetParam() + 1);
    Problem p = rule_problem(c, rng);
    Buffers u = random_like(p, p.spec.outputs, rng);
    Buffers grad = run_vjp(p, u);
    auto loss = [&](const Buffers &memory) { return dot(run_forward(p, memory), u).value; };

    const double h = 1e-6;
    for (const std::string &x : p.spec.wrt)
        for (size_t e = 0; e < grad.at(x).size(); ++e) {
            Buffers plus = p.memory, minus = p.memory;
            plus[x][e] += h;
            minus[x][e] -= h;
            double fd = (loss(plus) - loss(minus)) / (2 * h);
            EXPECT_NEAR(grad.at(x)[e], fd, 1e-6 * std::max(1.0, std::fabs(fd)))
                << c.name << ": d/d" << x << "[" << e << "]";
        }
}

INSTANTIATE_TEST_SUITE_P(AllRules, RuleNumeric, ::testing::Range<size_t>(0, rule_cases().size()),
                         [](const auto &info) { return rule_cases()[info.param].name; });

}  // namespace

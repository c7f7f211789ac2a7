// Forward mode on the interpreter in float64: each tangent kernel against central differences along
// a random direction, and against reverse mode by the dot-product test <J v, u> = <v, Jᵀ u>, which
// holds exactly up to rounding since neither side uses finite differences.
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"
#include "passes/passes.h"

using namespace tad;
using namespace tad::testing;

namespace {

void expect_jvp_matches_central_differences(const Problem &p, std::mt19937_64 &rng) {
    Buffers v = random_like(p, p.spec.wrt, rng);
    Buffers jv = run_jvp(p, v);
    const double h = 1e-6;
    auto [plus, minus] = perturbed(p.memory, v, h);
    Buffers yp = run_forward(p, plus), ym = run_forward(p, minus);
    EXPECT_GT(dot(jv, jv).value, 0) << "J·v is zero: nothing was checked";
    for (const auto &[name, t] : jv)
        for (size_t e = 0; e < t.size(); ++e) {
            double fd = (yp.at(name)[e] - ym.at(name)[e]) / (2 * h);
            EXPECT_NEAR(t[e], fd, 1e-6 * std::max(1.0, std::fabs(fd))) << "(J·v) of " << name << "[" << e << "]";
        }
}

void expect_dot_product_identity(const Problem &p, std::mt19937_64 &rng) {
    Buffers v = random_like(p, p.spec.wrt, rng), u = random_like(p, p.spec.outputs, rng);
    Dot jv_u = dot(run_jvp(p, v), u), v_jtu = dot(v, run_vjp(p, u));
    EXPECT_GT(jv_u.magnitude, 0) << "J·v is zero: nothing was checked";
    EXPECT_NEAR(jv_u.value, v_jtu.value, 1e-10 * std::max(jv_u.magnitude, v_jtu.magnitude));
}

class RuleJvp : public ::testing::TestWithParam<size_t> {};

TEST_P(RuleJvp, MatchesCentralDifferences) {
    std::mt19937_64 rng(GetParam() + 1);
    Problem p = rule_problem(rule_cases()[GetParam()], rng);
    expect_jvp_matches_central_differences(p, rng);
}

TEST_P(RuleJvp, DotProductWithReverseMode) {
    std::mt19937_64 rng(GetParam() + 101);
    Problem p = rule_problem(rule_cases()[GetParam()], rng);
    expect_dot_product_identity(p, rng);
}

INSTANTIATE_TEST_SUITE_P(AllRules, RuleJvp, ::testing::Range<size_t>(0, rule_cases().size()),
                         [](const auto &info) { return rule_cases()[info.param].name; });

struct Kernel {
    const char *name;
    Problem (*make)(std::mt19937_64 &);
};
void PrintTo(const Kernel &k, std::ostream *os) { *os << k.name; }
const Kernel kKernels[] = {{"layer_norm", layer_norm_problem}, {"masked_other", masked_other_problem}};

class KernelJvp : public ::testing::TestWithParam<Kernel> {};

TEST_P(KernelJvp, MatchesCentralDifferences) {
    std::mt19937_64 rng(7);
    Problem p = GetParam().make(rng);
    expect_jvp_matches_central_differences(p, rng);
}

TEST_P(KernelJvp, DotProductWithReverseMode) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
        std::mt19937_64 rng(seed);
        Problem p = GetParam().make(rng);
        expect_dot_product_identity(p, rng);
    }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelJvp, ::testing::ValuesIn(kKernels),
                         [](const auto &info) { return std::string(info.param.name); });

// What the layer_norm dot-product test covers on the reverse side: W's and B's gradients summed
// over the rows with atomics, X's written with plain stores mirroring Y.
TEST(KernelJvp, LayerNormReverseSideUsesAtomicsAndStores) {
    std::mt19937_64 rng(1);
    Problem p = layer_norm_problem(rng);
    auto plan = passes::plan_gradient_writes(p.fwd, p.spec.wrt, p.spec.outputs);
    EXPECT_EQ(plan.at("W").kind, passes::GradWrite::Atomic);
    EXPECT_EQ(plan.at("B").kind, passes::GradWrite::Atomic);
    EXPECT_EQ(plan.at("X").kind, passes::GradWrite::Store);
    EXPECT_EQ(plan.at("X").mirror, "Y");
}

}  // namespace

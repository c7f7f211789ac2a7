// Reverse mode: whole backward kernels, for what the reverse pass itself builds around the rules
// (the rules' own ops have their goldens in rule_golden_test.cpp): the replay, the seeding of
// adjoints from the outputs' gradients, and the gradient writes, plain stores or relaxed atomics.
#include <gtest/gtest.h>

#include "../common/golden.h"
#include "harness.h"
#include "passes/passes.h"

using namespace tad;
using namespace tad::testing;

namespace {

std::string backward_ir(const Problem &p) {
    auto plan = passes::plan_gradient_writes(p.fwd, p.spec.wrt, p.spec.outputs);
    return ir::print(ad::reverse(p.fwd, p.spec, plan, p.fwd.name + "_bwd").fn);
}

// Y's gradient loaded through its shadow and cast to the compute dtype (dy); each input's gradient
// stored where the input was loaded, no two programs writing one element.
TEST(ReverseKernelGolden, SeedingAndStores) {
    std::mt19937_64 rng(1);
    expect_golden("ad/golden/kernels/rule_mul_bwd.ir", backward_ir(rule_problem(rule_case("mul"), rng)));
}

// An input read through a broadcast pointer gets its gradient with a relaxed atomic add.
TEST(ReverseKernelGolden, AtomicGradientWrite) {
    std::mt19937_64 rng(1);
    expect_golden("ad/golden/kernels/rule_broadcast_bwd.ir", backward_ir(rule_problem(rule_case("broadcast"), rng)));
}

// Several programs: masked loads replayed with other = 0, the saved statistic Rstd neither seeded
// nor written, Mean's gradient seeded beside Y's, W's and B's gradients summed over the rows with
// atomics, X's stored.
TEST(ReverseKernelGolden, LayerNorm) {
    std::mt19937_64 rng(1);
    expect_golden("ad/golden/kernels/layer_norm_bwd.ir", backward_ir(layer_norm_problem(rng)));
}

// A masked load whose `other` is differentiable: the masked-off lanes' adjoint goes to `other`.
TEST(ReverseKernelGolden, MaskedLoadWithDifferentiableOther) {
    std::mt19937_64 rng(1);
    expect_golden("ad/golden/kernels/masked_other_bwd.ir", backward_ir(masked_other_problem(rng)));
}

}  // namespace

// Updates in place stored (passes/updates_to_stores.h) on the CPU tier: rope applied to Q and K in
// place, and a residual add in place before RMSNorm, read each element's cotangent, and their
// backwards store the input's gradient over it where the forward's writes are proved one program's
// each (no zero store, no atomic add), matching finite differences. From a review: a tensor passed
// to two parameters of one launch keeps its adds (the pass sees one parameter's accesses only: x*x
// in place, and two updates of one tensor, were wrong gradients).
#include <gtest/gtest.h>

#include <string>

#include "cpu_session.h"

using tad::test::count;
using tad::test::kernel;
using tad::test::kPython;
using tad::test::torch_available;

namespace {

TEST(UpdatesCpu, RopeInPlaceStoresItsGradients) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("dataset/rope_inplace.py", "updates", 2);
    const std::string k = kernel(src, "_rope_qk_inplace_bwd");
    EXPECT_EQ(count(k, "tl.atomic_add("), 0) << k;
    EXPECT_EQ(count(k, "tl.store("), 4) << k;
    EXPECT_EQ(count(k, "read, updated and stored in place"), 2) << k;
    EXPECT_EQ(count(kernel(src, "_rope_qk_inplace_bwd_adds"), "tl.atomic_add("), 4) << src;
}

TEST(UpdatesCpu, ResidualAddInPlaceStoresItsGradient) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("dataset/fused_add_rmsnorm.py", "updates", 2);
    const std::string k = kernel(src, "_fused_add_rmsnorm_fwd_bwd");
    EXPECT_EQ(count(k, "tl.atomic_add("), 0) << k;
    EXPECT_EQ(count(k, "tl.store(DRes + "), 0) << k;  // no zero store
}

TEST(UpdatesCpu, ATensorOfTwoParametersKeepsItsAdds) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    for (const char *file :
         {"tests/pipeline/data/update/alias_square.py", "tests/pipeline/data/update/alias_two_updates.py"}) {
        const std::string src = tad::test::generate_and_verify(file, "updates", 1);
        EXPECT_EQ(count(src, "read, updated and stored in place"), 0) << src;
    }
}

}  // namespace

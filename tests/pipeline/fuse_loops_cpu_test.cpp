// Factored sums and fused loops (passes/factor_sums.h, fuse_loops.h) on the CPU tier: group norm's
// backward, its first two loops fused, still matches finite differences over its SWEEP (block sizes
// 128 and 1024, groups of one and several blocks), and reads X in two loops instead of three.
#include <gtest/gtest.h>

#include <string>

#include "../common/scoped_env.h"
#include "cpu_session.h"

namespace {

using tad::test::count;
using tad::test::kernel;
using tad::testing::ScopedEnv;

TEST(FuseLoopsCpu, GroupNormReadsXInTwoLoops) {
    REQUIRE_TORCH();
    for (const char *mode : {"on", "off"}) {
        ScopedEnv env("TAD_FUSE_LOOPS", mode);
        const std::string k =
            kernel(tad::test::generate_and_verify("dataset/group_norm.py", mode, 2), "_group_norm_fwd_bwd");
        const bool on = std::string(mode) == "on";
        // top-level loops, one of them run last block first (reverse_rereads.h) or not
        EXPECT_EQ(count(k, "\n    for start in ") + count(k, "\n    for rev_start in "), on ? 2 : 3) << mode << ":\n"
                                                                                                     << k;
        EXPECT_EQ(count(k, "tl.load(X + offs"), on ? 2 : 3) << mode << ":\n" << k;
    }
}

// Batch norm's backward stores dW and dB, and reads then zeroes the running statistics' gradients,
// between its first two loops; with the variance's factor (a scalar broadcast in the loop) taken
// out, the second loop fuses with the first all the same and those ops follow the fused loop.
TEST(FuseLoopsCpu, BatchNormFusesPastTheStoresBetweenItsLoops) {
    REQUIRE_TORCH();
    for (const char *mode : {"on", "off"}) {
        ScopedEnv env("TAD_FUSE_LOOPS", mode);
        const std::string k =
            kernel(tad::test::generate_and_verify("dataset/batch_norm_train.py", mode, 2), "_batch_norm_train_fwd_bwd");
        const bool on = std::string(mode) == "on";
        EXPECT_EQ(count(k, "\n    for start in "), on ? 2 : 3) << mode << ":\n" << k;
        EXPECT_EQ(count(k, "tl.load(X + offs"), on ? 2 : 3) << mode << ":\n" << k;
    }
}

// A tensor passed twice, overwritten through one parameter between two loops: the zeroing of its
// shadow between the backward's loops stays between them (the second loop adds to that shadow).
TEST(FuseLoopsCpu, AShadowWrittenBetweenTheLoopsKeepsThemApartWhereTheSecondWrites) {
    REQUIRE_TORCH();
    tad::test::generate_and_verify("tests/pipeline/data/fuse/aliased_overwrite.py", "aliased", 1);
}

}  // namespace

// Loops that reread run last iteration first (passes/reverse_rereads.h) on the CPU tier: group norm's
// and KL divergence's second loops over a row, reversed, still match finite differences over their
// SWEEPs (groups of one block and of several, the last one partial), and the switch turns the pass off.
#include <gtest/gtest.h>

#include <string>

#include "../common/scoped_env.h"
#include "cpu_session.h"

namespace {

using tad::test::count;
using tad::test::kernel;
using tad::testing::ScopedEnv;

TEST(ReverseRereadsCpu, GroupNormWritesDxLastBlockFirst) {
    REQUIRE_TORCH();
    for (const char *mode : {"on", "off"}) {
        ScopedEnv env("TAD_REVERSE_REREADS", mode);
        const std::string k =
            kernel(tad::test::generate_and_verify("dataset/group_norm.py", mode, 2), "_group_norm_fwd_bwd");
        const bool on = std::string(mode) == "on";
        EXPECT_EQ(
            count(k,
                  "\n    for rev_start in range(0, group_size, BLOCK_SIZE):\n        start = last_start - rev_start\n"),
            on ? 1 : 0)
            << mode << ":\n"
            << k;
        EXPECT_EQ(count(k, "\n    for start in "), on ? 1 : 2) << mode << ":\n" << k;
    }
}

TEST(ReverseRereadsCpu, KlDivergenceRereadsItsRowFromTheEnd) {
    REQUIRE_TORCH();
    const std::string src = tad::test::generate_and_verify("dataset/kl_div.py", "on", 2);
    EXPECT_GE(count(src, "start = last_start - rev_start"), 1) << src;
}

}  // namespace

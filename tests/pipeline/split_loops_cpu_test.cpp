// Loops split across programs on the CPU tier (passes/split_loops.h): group norm walked in blocks of
// 32 sums over tens of iterations per (sample, group) program; the split variant runs a sums kernel
// and then the rest on 8 programs per group, each over its share of the iterations, and matches
// finite differences, including a group whose last program's share is empty (17 iterations) and a
// small group below the split's threshold (the unsplit fallback). TAD_SPLIT_LOOPS=off keeps one
// kernel. From a review, each a wrong gradient or a failed generation before its fix: a kernel that
// reads program_id(1) splits along axis 2; a tile sum squared is not read as its total (not split);
// a forward remapped twice names its split kernels apart from its second remapping's.
#include <gtest/gtest.h>

#include <string>

#include "../common/scoped_env.h"
#include "cpu_session.h"

using tad::test::kPython;
using tad::test::torch_available;
using tad::testing::ScopedEnv;

namespace {

bool has(const std::string &src, const std::string &what) { return src.find(what) != std::string::npos; }

constexpr const char *kFile = "tests/pipeline/data/split/group_norm_small_blocks.py";

TEST(SplitLoopsCpu, GroupNormSplitsAcrossPrograms) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    ScopedEnv env("TAD_SPLIT_LOOPS", "on");
    const std::string src = tad::test::generate_and_verify(kFile, "split", 4);
    // The sums kernel without the lanes' own adds first (segment_atomics.h), then with them; one rest.
    EXPECT_TRUE(has(src, "_group_norm_fwd_bwd_share_sums_few[_regrid(launches[0].grid, 1, len(range(0, 8, 1)))]"))
        << src;
    EXPECT_TRUE(has(src, "_group_norm_fwd_bwd_share_sums[_regrid(launches[0].grid, 1, len(range(0, 8, 1)))]")) << src;
    EXPECT_EQ(src.find("def _group_norm_fwd_bwd_shares("), src.rfind("def _group_norm_fwd_bwd_shares(")) << src;
    // The rest's dX stores cover the buffer on its own grid (Alloc::run): no zero fill where that holds.
    EXPECT_TRUE(has(src,
                    "grid_ = _regrid(launches[0].grid, 1, len(range(0, 8, 1)))\n        "
                    "_zero_unless_covered(d_x, ((1, _tdiv(a[\"C\"], a[\"G\"])*a[\"HW\"]), (a[\"stride_xn\"], "
                    "_tdiv(_grid_size(grid_, 0), a[\"G\"])), (_tdiv(a[\"C\"], a[\"G\"])*a[\"HW\"], a[\"G\"]), ), "
                    "True and 0 not in grid_)\n        _group_norm_fwd_bwd_shares[grid_]("))
        << src;
    EXPECT_TRUE(has(src, "split_sums = _stash_buffer(math.prod(launches[0].grid) * 8 * 3, ")) << src;
    const std::string rest = tad::test::kernel(src, "_group_norm_fwd_bwd_shares");
    EXPECT_TRUE(has(rest, "for t13 in range(8):")) << rest;
    EXPECT_FALSE(has(rest, "tl.atomic_add(")) << rest;
}

TEST(SplitLoopsCpu, ReviewCases) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    ScopedEnv env("TAD_SPLIT_LOOPS", "on");
    const std::string heads = tad::test::generate_and_verify("tests/pipeline/data/split/reads_axis_one.py", "split", 2);
    EXPECT_TRUE(has(heads, "grid_ = _regrid(launches[0].grid, 2, len(range(0, 8, 1)))")) << heads;
    EXPECT_TRUE(has(heads, "_heads_fwd_bwd_shares[grid_](")) << heads;
    const std::string sq = tad::test::generate_and_verify("tests/pipeline/data/split/squared_sum.py", "split", 1);
    EXPECT_FALSE(has(sq, "_share_sums")) << sq;
    const std::string rm = tad::test::generate_and_verify("tests/pipeline/data/split/remapped.py", "split", 1);
    EXPECT_TRUE(has(rm, "def _rm_fwd_bwd_remapped_shares(")) << rm;
}

TEST(SplitLoopsCpu, OffKeepsOneKernel) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    ScopedEnv env("TAD_SPLIT_LOOPS", "off");
    const std::string src = tad::test::generate_and_verify(kFile, "split", 4);
    EXPECT_FALSE(has(src, "_share_sums")) << src;
}

}  // namespace

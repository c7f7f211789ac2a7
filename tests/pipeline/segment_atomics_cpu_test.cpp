// Atomic adds by segments (passes/segment_atomics.h) on the CPU tier: per-channel gradients whose
// blocks fall into one channel, two, or several (the SWEEP of channel_affine.py; group norm's
// SWEEP) still match finite differences, and the generated kernel adds through runs and segments,
// never lane by lane. The SWEEP runs both forms: the one without the lanes' own adds where
// 15 * HW >= BLOCK, the one with them at HW = 1 (32 channels in a block).
#include <gtest/gtest.h>

#include <string>

#include "cpu_session.h"

namespace {

using tad::test::kernel;

bool has(const std::string &src, const std::string &what) { return src.find(what) != std::string::npos; }

TEST(SegmentAtomicsCpu, ChannelGradientsAddRunsAndSegments) {
    REQUIRE_TORCH();
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/combine/channel_affine.py", "segments", 4);
    const std::string k = kernel(src, "_channel_affine_bwd");
    EXPECT_TRUE(has(k, "DB_run = tl.full((BLOCK,), 0.0, tl.float32)")) << k;
    const size_t flush = k.find("        for flush in range((run_live & t");
    ASSERT_NE(flush, std::string::npos) << k;
    const size_t body = k.find(":\n", flush) + 2;
    const std::string adds =
        "            tl.atomic_add(DB + run_at, tl.sum(DB_run), sem=\"relaxed\")\n"
        "            tl.atomic_add(DS + run_at, tl.sum(DS_run), sem=\"relaxed\")\n        ";
    EXPECT_EQ(k.substr(body, adds.size()), adds) << k;
    EXPECT_TRUE(has(k, "        for segment in range(tl.where(")) << k;
    // Past 16 channels in a block (the SWEEP's HW = 1), the lanes' own adds.
    EXPECT_TRUE(has(k, "        for lanes in range(")) << k;
    // The last run, after the loop.
    EXPECT_TRUE(has(k, "    for flush in range(run_live.to(tl.int32)):\n")) << k;
    EXPECT_FALSE(has(k, "tl.atomic_add(DB + ch")) << k;
    EXPECT_FALSE(has(k, "tl.atomic_add(DS + ch")) << k;
    const std::string few = kernel(src, "_channel_affine_bwd_few");
    EXPECT_TRUE(has(few, "        for segment in range(tl.where(")) << few;
    EXPECT_FALSE(has(few, "for lanes in range(")) << few;
    EXPECT_FALSE(has(few, "tl.atomic_add(DB + ch")) << few;
    const size_t guard = src.find("    if 15*a[\"HW\"] >= a[\"BLOCK\"]:\n");
    ASSERT_NE(guard, std::string::npos) << src;
    EXPECT_LT(src.find("_channel_affine_bwd_few[launches[0].grid]", guard), src.find("    else:\n", guard)) << src;
}

TEST(SegmentAtomicsCpu, GroupNormAffineGradients) {
    REQUIRE_TORCH();
    const std::string k =
        kernel(tad::test::generate_and_verify("dataset/group_norm.py", "segments", 2), "_group_norm_fwd_bwd");
    EXPECT_TRUE(has(k, "DW_run = tl.full((BLOCK_SIZE,), 0.0, tl.float32)")) << k;
    EXPECT_TRUE(has(k, "for segment in range(")) << k;
    EXPECT_FALSE(has(k, "tl.atomic_add(DW + ch")) << k;
    EXPECT_FALSE(has(k, "tl.atomic_add(DB + ch")) << k;
}

// The last run's flush after the loop computes the row's base again there, where the kernel computed
// it inside the loop (the module used the body's value past the loop before: a review's probe).
TEST(SegmentAtomicsCpu, TheLastRunsBaseIsComputedAfterTheLoop) {
    REQUIRE_TORCH();
    const std::string k = kernel(
        tad::test::generate_and_verify("tests/pipeline/data/segments/base_in_loop.py", "segments", 3), "_dup_fwd_bwd");
    EXPECT_TRUE(has(k, " = DX + r * stride\n    for flush in range(run_live.to(tl.int32)):\n")) << k;
}

// A base that moves with the loop carries no runs (their sums would reach a later iteration's base):
// segments alone.
TEST(SegmentAtomicsCpu, ABaseMovingWithTheLoopCarriesNoRuns) {
    REQUIRE_TORCH();
    const std::string k =
        kernel(tad::test::generate_and_verify("tests/pipeline/data/segments/moving_base.py", "segments", 3),
               "_spread_fwd_bwd");
    EXPECT_FALSE(has(k, "run_at")) << k;
    EXPECT_TRUE(has(k, "for segment in range(")) << k;
}

// Group norm with each group's offset inside its loops: the runs keep their tile type while the rewrite
// grows the function's values (a stale reference made them scalars: the module did not compile).
TEST(SegmentAtomicsCpu, RunsKeepTheirTileTypeWhereTheBasesAreComputedInTheLoops) {
    REQUIRE_TORCH();
    const std::string k =
        kernel(tad::test::generate_and_verify("tests/pipeline/data/segments/group_offsets_in_loops.py", "segments", 2),
               "_group_norm_fwd_bwd");
    EXPECT_TRUE(has(k, "DW_run = tl.full((BLOCK_SIZE,), 0.0, tl.float32)")) << k;
    EXPECT_FALSE(has(k, "tl.broadcast_to(")) << k;
}

}  // namespace

// Combined atomic adds on the CPU tier: a per-channel gradient whose block of lanes falls into one
// channel, two, or several (the SWEEP of channel_affine.py) adds the right sums on every path, and
// the generated kernel holds the combined form (a scalar add of a tile's sum).
#include <gtest/gtest.h>

#include <string>

#include "cpu_session.h"

using tad::test::kPython;
using tad::test::torch_available;

namespace {

bool has(const std::string &src, const std::string &what) { return src.find(what) != std::string::npos; }

TEST(CombineAtomicsCpu, ChannelGradientsAddTileSums) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/combine/channel_affine.py", "combined", 3);
    EXPECT_TRUE(has(src, "tl.atomic_add(DS + t5, tl.sum(tl.where(")) << src;
    EXPECT_TRUE(has(src, "tl.atomic_add(DB + t5, tl.sum(tl.where(")) << src;
    EXPECT_TRUE(has(src, "tl.atomic_add(DB + ch, dY, mask=t")) << src;
    // The channels at the block's first and last active lanes, not reductions of the tile.
    EXPECT_TRUE(has(src, "t5 = tl.minimum(")) << src;
    EXPECT_FALSE(has(src, "tl.min(")) << src;
}

TEST(CombineAtomicsCpu, GroupNormAffineGradients) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("dataset/group_norm.py", "combined", 2);
    EXPECT_TRUE(has(src, "tl.atomic_add(DW + t")) << src;
    EXPECT_TRUE(has(src, "tl.sum(tl.where(t")) << src;
}

}  // namespace

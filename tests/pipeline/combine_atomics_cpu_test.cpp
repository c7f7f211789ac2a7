// Combined atomic adds on the CPU tier: a per-channel gradient at offsets that step by 2 (no run of
// consecutive addresses for segment_atomics.h) whose block of lanes falls into one channel, two, or
// several (the SWEEP of packed_affine.py) adds the right sums on every path, and the generated
// kernel holds the combined form (a scalar add of a tile's sum).
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
        tad::test::generate_and_verify("tests/pipeline/data/combine/packed_affine.py", "combined", 3);
    EXPECT_TRUE(has(src, "tl.atomic_add(DP + t6, tl.sum(tl.where(mask & (at == t6), ds, 0.0)), mask=t8")) << src;
    EXPECT_TRUE(has(src, "tl.atomic_add(t2, ds, mask=mask & ~t8")) << src;
    // The offsets at the block's first and last active lanes, not reductions of the tile.
    EXPECT_TRUE(has(src, "t6 = tl.minimum(")) << src;
    EXPECT_FALSE(has(src, "tl.min(")) << src;
    EXPECT_FALSE(has(src, "for segment in")) << src;
}

}  // namespace

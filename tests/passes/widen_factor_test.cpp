// passes::widen_factor and widened_value: a widened transposed kernel's block size comes from the
// launch's block sizes, never from a factor fixed at the traced ones (the module's _widen is the
// same rule; tests/python/test_templates.py).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "passes/widen.h"

namespace {

using tad::passes::Widening;

int64_t widened(const Widening &w, const std::map<std::string, int64_t> &values) {
    int64_t out = -1;
    const bool ok = tad::passes::widened_value(
        w,
        [&](const std::string &n, int64_t *v) {
            auto it = values.find(n);
            if (it == values.end()) return false;
            *v = it->second;
            return true;
        },
        &out);
    return ok ? out : -1;
}

TEST(WidenFactor, StopsAtTheMostCopiesTheElementsAndTheSide) {
    EXPECT_EQ(tad::passes::widen_factor(32, 8, 128 * 32), 4);  // 128 x 128 elements
    EXPECT_EQ(tad::passes::widen_factor(16, 8, 16), 8);  // the most copies
    EXPECT_EQ(tad::passes::widen_factor(32, 8, 64 * 32), 4);  // the side: 128, not 256
    EXPECT_EQ(tad::passes::widen_factor(256, 8, 64 * 256), 1);  // wider already
}

// matmul's dA tile, BLOCK_M x BLOCK_K, traced at 64 x 32 (x4 there), launched at 64 x 64: twice,
// where the traced factor made a 256-wide tile (x8 at the time, 512: computed wrong on the H100).
TEST(WidenedValue, ComesFromTheLaunchsBlockSizes) {
    const Widening w{"BLOCK_K", 4, 8, {{"BLOCK_M", "BLOCK_K"}}};
    EXPECT_EQ(widened(w, {{"BLOCK_M", 64}, {"BLOCK_K", 32}}), 128);
    EXPECT_EQ(widened(w, {{"BLOCK_M", 64}, {"BLOCK_K", 64}}), 128);
    EXPECT_EQ(widened(w, {{"BLOCK_M", 16}, {"BLOCK_K", 8}}), 64);
}

TEST(WidenedValue, LiteralDimsAndEveryTileCount) {
    const Widening w{"B", 2, 8, {{"B", "16"}, {"B"}}};  // 16 B + B elements
    EXPECT_EQ(widened(w, {{"B", 32}}), 128);  // 17 * 32 * 4 = 2176 <= 16384, 128 wide
    EXPECT_EQ(widened(w, {{"B", 128}}), 128);
}

TEST(WidenedValue, FailsOnADimTheLaunchDoesNotRecord) {
    const Widening w{"BLOCK_K", 4, 8, {{"BLOCK_M", "BLOCK_K"}}};
    EXPECT_EQ(widened(w, {{"BLOCK_K", 32}}), -1);
}

}  // namespace

// Scatter folds on the CPU tier: a row's gradient stored with the data-dependent add that lands in
// the program's own row folded into the store, the others added by the scatter kernel
// (tests/pipeline/data/scatter/pick.py: two picks per row, in the own row, in another, none, and
// two rows picking one element), and cross entropy, whose target is in its row.
#include <gtest/gtest.h>

#include <string>

#include "cpu_session.h"

namespace {

using tad::test::count;
using tad::test::kernel;

TEST(ScatterFoldCpu, PicksInAndOutsideTheRow) {
    REQUIRE_TORCH();
    const std::string src = tad::test::generate_and_verify("tests/pipeline/data/scatter/pick.py", "folded", 2);
    const std::string rest = kernel(src, "_pick_bwd");
    EXPECT_EQ(count(rest, "tl.atomic_add("), 0) << rest;
    EXPECT_EQ(count(rest, "tl.store(Hits + "), 1) << rest;
    const std::string scatter = kernel(src, "_pick_bwd_scatter");
    EXPECT_EQ(count(scatter, "tl.load(Hits + "), 1) << scatter;
    EXPECT_EQ(count(scatter, "& 1 == 0)"), 1) << scatter;  // one bit per scattered write
    EXPECT_EQ(count(scatter, "& 2 == 0)"), 1) << scatter;
    // Folded: the buffer stays in the input's dtype (no float32 buffer, no cast after).
    EXPECT_EQ(count(src,
                    "_covered_buffer(x, ((1, a[\"N\"]), (a[\"stride\"], (launches[0].grid + (1, 1))[0]), ), "
                    "a[\"BLOCK\"] >= a[\"N\"])"),
              1)
        << src;
}

TEST(ScatterFoldCpu, CrossEntropyTargetInItsRow) {
    REQUIRE_TORCH();
    const std::string src = tad::test::generate_and_verify("dataset/cross_entropy.py", "folded", 2);
    const std::string rest = kernel(src, "_cross_entropy_fwd_bwd");
    EXPECT_EQ(count(rest, "tl.atomic_add("), 0) << rest;
    EXPECT_EQ(count(rest, "tl.store(DLogits + cols, dx + tl.where("), 1) << rest;
    EXPECT_EQ(count(kernel(src, "_cross_entropy_fwd_bwd_scatter"), "tl.atomic_add("), 1) << src;
}

}  // namespace

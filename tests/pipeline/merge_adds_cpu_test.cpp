// Adds merged across loops and stored, on the CPU tier: a row centering whose two reverse loops
// each add a term of dX (tests/pipeline/data/merge/center.py, rows with and without a gap after
// them), and group norm, whose three do (its DW and DB stay atomic adds); batch norm's three, at a
// flat index divided back into sample and position (idx // L, idx % L), stored with no zero fill.
#include <gtest/gtest.h>

#include <string>

#include "cpu_session.h"

namespace {

using tad::test::count;
using tad::test::kernel;

TEST(MergeAddsCpu, CenteredRowsStoreDxOnce) {
    REQUIRE_TORCH();
    const std::string src = tad::test::generate_and_verify("tests/pipeline/data/merge/center.py", "merged", 3);
    const std::string k = kernel(src, "_center_bwd");
    EXPECT_EQ(count(k, "tl.store(DX + "), 1) << k;
    EXPECT_EQ(count(k, "tl.atomic_add("), 0) << k;
    EXPECT_EQ(count(kernel(src, "_center_bwd_adds"), "tl.atomic_add(DX + "), 1) << src;
    EXPECT_NE(src.find("if ((a[\"stride\"] >= a[\"N\"])"), std::string::npos) << src;
}

TEST(MergeAddsCpu, GroupNormStoresDxOnce) {
    REQUIRE_TORCH();
    const std::string src = tad::test::generate_and_verify("dataset/group_norm.py", "merged", 2);
    const std::string k = kernel(src, "_group_norm_fwd_bwd");
    EXPECT_EQ(count(k, "tl.store(DX + "), 1) << k;
    EXPECT_EQ(count(k, "tl.atomic_add(DX"), 0) << k;
    EXPECT_GT(count(k, "tl.atomic_add(DW"), 0) << k;
}

TEST(MergeAddsCpu, BatchNormStoresDxAtADividedIndex) {
    REQUIRE_TORCH();
    const std::string src = tad::test::generate_and_verify("dataset/batch_norm_train.py", "divided", 2);
    const std::string k = kernel(src, "_batch_norm_train_fwd_bwd");
    EXPECT_EQ(count(k, "tl.store(DX + offs"), 1) << k;
    EXPECT_EQ(count(k, "tl.atomic_add("), 0) << k;
    EXPECT_EQ(count(src, "d_x = _covered_buffer(x, ((1, a[\"L\"]), (a[\"stride_n\"], a[\"N\"]), "), 1) << src;
    EXPECT_GT(count(kernel(src, "_batch_norm_train_fwd_bwd_adds"), "tl.atomic_add(DX + "), 0) << src;
}

}  // namespace

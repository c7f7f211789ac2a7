// Reading back what the forward saved, on the CPU tier: LayerNorm's backward loads mean and rstd
// (two row reductions left of four), a statistic saved at a run-time stride is read back only
// where the launcher's guard proves each row its own element (rms_slot.py's slot = 0 recomputes),
// a loop's result saved as it is replaces that loop's rerun, and a residual sum h = x + r saved as a
// tile (into an output, or into r's own buffer updated in place) is read back in place of x and r.
#include <gtest/gtest.h>

#include <string>

#include "cpu_session.h"

using tad::test::kPython;
using tad::test::torch_available;

namespace {

using tad::test::count;
using tad::test::kernel;

TEST(SavedValuesCpu, LayerNormReadsMeanAndRstd) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("examples/layernorm.py", "saved", 2);
    const std::string k = kernel(src, "_layernorm_fwd_bwd");
    EXPECT_EQ(count(k, "tl.load(Mean_final + "), 1) << k;
    EXPECT_EQ(count(k, "tl.load(Rstd_final + "), 1) << k;
    EXPECT_EQ(count(k, "tl.sum("), 2) << k;  // the backward's own: dmean, drstd
    EXPECT_EQ(count(k, "tl.sqrt("), 0) << k;
}

TEST(SavedValuesCpu, StatisticAtRunTimeStride) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("tests/pipeline/data/saved/rms_slot.py", "saved", 3);
    EXPECT_EQ(count(kernel(src, "_rms_slot_bwd"), "tl.sum("), 1) << src;
    EXPECT_EQ(count(kernel(src, "_rms_slot_bwd_recompute"), "tl.sum("), 2) << src;
    EXPECT_NE(src.find("if a[\"slot\"] >= 1:"), std::string::npos) << src;
}

// Values whose lanes off their store's mask are not 0 are read back as 0 there only where those
// lanes are unread (saved_values.h): not where the value is undone and its operand read by a wider
// write, not where an op's derivative reads its own result (sqrt's 1 / (2 y)), not through an
// exponential that 0 less a large offset overflows. Each of these review probes had NaN or wrong
// gradients when they were read back.
TEST(SavedValuesCpu, LanesOffTheMaskReadOnlyWhereUnread) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    for (const char *file : {"tests/pipeline/data/saved/undone_wider_write.py",
                             "tests/pipeline/data/saved/wrapped_sqrt.py", "tests/pipeline/data/saved/wrapped_exp.py"}) {
        const std::string src = tad::test::generate_and_verify(file, "saved", 2);
        EXPECT_EQ(src.find("Y_final"), std::string::npos) << file;
    }
}

TEST(SavedValuesCpu, LoopResult) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("tests/pipeline/data/saved/loop_sum.py", "saved", 2);
    const std::string k = kernel(src, "_loop_sum_bwd");
    EXPECT_EQ(count(k, "tl.load(S_final + row)"), 1) << k;
    EXPECT_EQ(count(k, "start in range(0, N, BLOCK):"), 2)
        << k;  // the gradient's two passes (`start`, `rev_start`), no rerun
}

TEST(SavedValuesCpu, SumOfTwoLoadsReadBack) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("dataset/add_layernorm.py", "saved", 2);
    const std::string k = kernel(src, "_add_layernorm_fwd_bwd");
    EXPECT_EQ(count(k, "tl.load(Hs_final + offs, mask=mask"), 1) << k;
    EXPECT_EQ(count(k, "tl.load(X "), 0) << k;
    EXPECT_EQ(count(k, "tl.load(R "), 0) << k;
    EXPECT_EQ(count(kernel(src, "_add_layernorm_fwd_bwd_recompute"), "tl.load(X "), 1) << src;
}

// Review findings, each a wrong gradient or a failed launch before its fix: the mask of a read-back
// tile computed from the buffer read back (the stand-in must take the forward's mask, not one
// recomputed from the final contents; the plan runner must bind the final buffer, not the copy
// from before the launch); a launch node's written views (its module does not save them, so
// nothing is read back from them); `other`s that are a tile and a non-zero constant.
TEST(SavedValuesCpu, ReadBackReviewCases) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string mask = tad::test::generate_and_verify("tests/pipeline/data/saved/mask_from_kept.py", "saved", 2);
    EXPECT_EQ(count(kernel(mask, "_k_bwd"), "tl.load(Res_final + offs, mask=m,"), 1) << mask;
    const std::string node = tad::test::generate_and_verify("tests/pipeline/data/saved/node_statistic.py", "saved", 1);
    EXPECT_EQ(count(node, "S_final"), 0) << node;
    tad::test::generate_and_verify("tests/pipeline/data/saved/other_tile.py", "saved", 2);
}

// A ReLU of the accumulator compares it: read back from tad's float32 buffer it is exact, so the
// backward loads it and runs no K loop. The kernel keeps its twin as written for calls without
// grad, which the module's check judges as the user's kernel (its reassigned constexpr is excused).
TEST(SavedValuesCpu, ComparedAccumulatorIsReadBack) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/saved/relu_of_accumulator.py", "saved", 2);
    const std::string k = kernel(src, "_mm_relu_bwd");
    EXPECT_EQ(count(k, "tl.load(TAD_SAVED_0_LIKE_C_final + "), 1) << k;
    EXPECT_EQ(count(k, "tl.dot("), 0) << k;
    // The twin as written, for calls without grad (the CPU check runs both paths of forward()).
    EXPECT_EQ(count(src, "def _mm_relu_without_saves("), 1) << src;
    EXPECT_EQ(count(src, "_mm_relu = _Recorded(_mm_relu, plain=_mm_relu_without_saves)"), 1) << src;
    EXPECT_EQ(count(kernel(src, "_mm_relu_without_saves"), "TAD_SAVED_"), 0) << src;
    EXPECT_EQ(count(src,
                    "    if not DIRTY and not _recorded_by_autograd(values):\n        return mm_relu(*args, "
                    "**kwargs)\n"),
              1)
        << src;
}

TEST(SavedValuesCpu, InPlaceSumReadBack) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("dataset/fused_add_rmsnorm.py", "saved", 2);
    const std::string k = kernel(src, "_fused_add_rmsnorm_fwd_bwd");
    EXPECT_EQ(count(k, "tl.load(Res_final + "), 1) << k;
    EXPECT_EQ(count(k, "tl.load(X "), 0) << k;
    EXPECT_EQ(count(k, "tl.load(Res "), 0) << k;
    // The forward copies Res only where the backward's branch reads the copy (its fallback).
    EXPECT_EQ(count(src, "_SNAPSHOTS = {0: ((0, \"Res\", _snapshots_read_0),)}"), 1) << src;
    const std::string test = src.substr(src.find("def _snapshots_read_0("), 900);
    EXPECT_LT(test.find("return False"), test.find("return True")) << test;
}

}  // namespace

// The closed form of the online softmax on the CPU tier: with it, the backward of FlashAttention's
// forward and of an online logsumexp reads the logsumexp (and O) the forward saved and runs no copy
// of the forward loop (TAD_CLOSED_FORM=on), or replays the forward loop once and reverses it in one
// forward-order pass (recompute); without it (off) the loop is reversed by recomputation, a loop
// nested in the reverse loop, or, where the host sizes its tape (--loops auto, the default: the
// online logsumexp's loop over N), from a tape. Every way the gradients match finite differences (the test cases
// include masked rows: N not a multiple of the block). A row's maximum subtracted and divided out
// again (softmax, log_softmax) is held constant; one that reaches the output keeps its gradient. A
// plain sum the loop carries beside the softmax is copied into the closed form (label smoothing).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "../common/scoped_env.h"
#include "cpu_session.h"

using tad::test::kPython;
using tad::test::torch_available;
using tad::testing::ScopedEnv;

namespace {

bool has(const std::string &src, const std::string &what) { return src.find(what) != std::string::npos; }

// Recomputation nests a rerun of the forward loop (its iterator renamed `<name>_1`) in the reverse loop.
bool recomputes(const std::string &src, const std::string &iterator) {
    return has(src, "for " + iterator + "_1 in range(");
}

struct Case {
    const char *name, *file, *iterator, *saved;  // saved: the buffer of the saved logsumexp
};

class ClosedFormCpu : public ::testing::TestWithParam<Case> {};

// The saved values' loads go through parameters named after their buffers, `<name>_final`.
bool loads_saved(const std::string &src, const std::string &buffer) { return has(src, buffer + "_final"); }

TEST_P(ClosedFormCpu, SavedValuesMatchFiniteDifferences) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    ScopedEnv env("TAD_CLOSED_FORM", "on");
    const std::string src = tad::test::generate_and_verify(GetParam().file, "saved values", 2);
    EXPECT_FALSE(recomputes(src, GetParam().iterator)) << src;
    EXPECT_TRUE(loads_saved(src, GetParam().saved)) << src;
}

TEST_P(ClosedFormCpu, OnePassMatchesFiniteDifferences) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    ScopedEnv env("TAD_CLOSED_FORM", "recompute");
    const std::string src = tad::test::generate_and_verify(GetParam().file, "closed form", 2);
    EXPECT_FALSE(recomputes(src, GetParam().iterator)) << src;
    EXPECT_FALSE(loads_saved(src, GetParam().saved)) << src;
}

TEST_P(ClosedFormCpu, OffRerunsOrTapesAndMatchesToo) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    ScopedEnv env("TAD_CLOSED_FORM", "off");
    const std::string src = tad::test::generate_and_verify(GetParam().file, "recompute", 2);
    EXPECT_TRUE(recomputes(src, GetParam().iterator) || has(src, "tape_stride")) << src;
    EXPECT_FALSE(loads_saved(src, GetParam().saved)) << src;
}

INSTANTIATE_TEST_SUITE_P(Files, ClosedFormCpu,
                         ::testing::Values(Case{"flash_attention", "dataset/flash_attention.py", "start_n", "L"},
                                           Case{"online_lse", "tests/pipeline/data/closed_form/online_lse.py", "start",
                                                "LSE"}),
                         [](const auto &info) { return std::string(info.param.name); });

// Kernel `name` of `file`'s backward, checked against finite differences: it neither tapes nor
// reverses its loop (no recompute of `iterator` up to a step either), and runs `loop` twice: one
// rerun for m and l, then one forward-order pass.
std::string one_rerun_one_pass(const char *file, const char *name, const char *iterator, const std::string &loop) {
    const std::string src = tad::test::generate_and_verify(file, name, 2);
    const std::string k = tad::test::kernel(src, name);
    EXPECT_FALSE(k.empty()) << src;
    EXPECT_FALSE(has(k, "Tape")) << k;
    EXPECT_FALSE(recomputes(k, iterator)) << k;
    EXPECT_FALSE(has(k, "for back in range(")) << k;
    EXPECT_EQ(tad::test::count(k, loop), 2) << k;
    return k;
}

// Label smoothing's loop carries a plain sum of the logits next to the online logsumexp: the closed
// form copies it (the same value whatever the maxima); the gradient pass stores dZ. (Its forward as
// written: with the logsumexp saved, see SavedResiduals below, the rerun goes too.)
TEST(ClosedFormPlainSums, LabelSmoothingRunsNoReverseLoop) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    ScopedEnv env("TAD_SAVE_RESIDUALS", "off");
    const std::string k = one_rerun_one_pass("dataset/label_smoothing_ce.py", "_label_smoothing_ce_fwd_bwd", "start",
                                             "for start in range(0, V, BLOCK_V):");
    EXPECT_TRUE(has(k, "tl.store(DZ + cols, ")) << k;
}

// The same forward stores no logsumexp: generate adds the store of m + log(s) after its loop
// (driver/residuals.h), and the backward reads it back and makes one pass over the logits.
TEST(SavedResiduals, LabelSmoothingSavesItsLogsumexp) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("dataset/label_smoothing_ce.py", "residuals", 2);
    const std::string fwd = tad::test::kernel(src, "_label_smoothing_ce_fwd");
    EXPECT_TRUE(has(fwd, "BLOCK_V: tl.constexpr, TAD_SAVED_0):")) << fwd;
    EXPECT_TRUE(has(fwd, "    _tad_tl.store(TAD_SAVED_0 + _tad_tl.program_id(0), m + _tad_tl.log(s)); lse = m + "))
        << fwd;
    const std::string k = tad::test::kernel(src, "_label_smoothing_ce_fwd_bwd");
    EXPECT_EQ(tad::test::count(k, "for start in range(0, V, BLOCK_V):"), 1) << k;
    EXPECT_EQ(tad::test::count(k, "tl.load(TAD_SAVED_0_final + row)"), 1) << k;
}

// KL divergence saves no logsumexp either, and its stub sums the rows in torch: each launch is its
// own autograd node, whose residual buffer is the node's temporary (launch_nodes.py keeps it with
// the launch); the backward drops the rerun of the statistics loop (two passes over the logits
// left of three).
TEST(SavedResiduals, KlDivInALaunchNode) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("dataset/kl_div.py", "residuals", 2);
    EXPECT_TRUE(has(src, "_tad_tl.store(TAD_SAVED_0 + _tad_tl.program_id(0), m + _tad_tl.log(s)); lse = ")) << src;
    EXPECT_TRUE(has(src, "_RecordedNode(_kl_div_rows_fwd)")) << src;
    const std::string k = tad::test::kernel(src, "_kl_div_rows_fwd_bwd_launch0_LOG_TARGET_False");
    EXPECT_EQ(tad::test::count(k, "tl.load(TAD_SAVED_0_final + row)"), 1) << k;
    EXPECT_EQ(tad::test::count(k, "start in range(0, V, BLOCK_V):"), 2) << k;  // `start`, `rev_start`
}

// A chain of two loops whose first adds rowsum(p·w) with w < 0 to l: the closed form holds (the
// gradients match), but l may end negative, so generate saves no m + log(l) for the backward (NaN
// gradients, before: a review's probe).
TEST(ClosedFormChains, ASignedSumSavesNoLogsumexp) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/closed_form/chain_signed_sum.py", "chain", 2);
    EXPECT_FALSE(has(src, "_tad_tl.store(TAD_SAVED")) << src;
}

// A loop that starts from an earlier online softmax's maximum but restarts its sums at zero is no
// chain (the earlier loop's l is read by a store); it has the closed form on its own, so generate
// saves its logsumexp and the backward reads it back (before, the failed chain refused it).
TEST(ClosedFormChains, SumsRestartedAtZeroStandAlone) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/closed_form/restart_after_logsumexp.py", "restart", 2);
    EXPECT_TRUE(has(src, "_tad_tl.store(TAD_SAVED_0__BLOCK_M + (_tad_tl.program_id(0)) * BLOCK_M")) << src;
}

// Attention whose forward stores O but no logsumexp, with a row vector of maxima per program:
// generate saves m + log(l) as a BLOCK_M tile per program, and the backward reads it and O back
// (FlashAttention-2's form: the key loop runs once, for the gradients).
TEST(SavedResiduals, AttentionWithoutLogsumexp) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/closed_form/attention_no_lse.py", "residuals", 2);
    EXPECT_TRUE(has(src,
                    "_tad_tl.store(TAD_SAVED_0__BLOCK_M + (_tad_tl.program_id(0) + _tad_tl.num_programs(0) * "
                    "_tad_tl.program_id(1)) * BLOCK_M + _tad_tl.arange(0, BLOCK_M), m_i + _tad_tl.log(l_i)); "))
        << src;
    const std::string k = tad::test::kernel(src, "_attn_fwd_bwd");
    EXPECT_TRUE(has(k, "TAD_SAVED_0__BLOCK_M_final, O_final")) << k;
    EXPECT_EQ(tad::test::count(k, "for start in range(0, N, BLOCK_N):"), 1) << k;
}

// The Triton tutorial's matmul with a leaky ReLU (its rows wrapped `% M`, so the accumulator holds
// other rows' sums off the store's mask): the saved accumulator's lanes off the mask reach only the
// masked store of C through a smooth op, so the backward reads it back with 0 there and runs no K
// loop; dA and dB are the two contractions of their transposed kernels.
TEST(SavedResiduals, WrappedMatmulReadsItsAccumulatorBack) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/transpose/matmul_wrapped.py", "residuals", 2);
    const std::string k = tad::test::kernel(src, "_mm_wrapped_bwd_remapped");
    EXPECT_TRUE(has(k, "tl.load(TAD_SAVED_0_LIKE_Y_final + ")) << k;
    EXPECT_FALSE(has(k, "tl.dot(")) << k;
}

// A matmul with a GELU epilogue: its backward needs act'(A·B + bias), which it would get by running
// the K loop again. generate saves the accumulator where the forward stores C (a float32 buffer laid
// out like C, under C's mask); the remapped backward reads it back and runs no K loop, and dZ (through
// erf and exp; ReLU's from two loads) is stashed once for the transposed dA and dB kernels.
TEST(SavedResiduals, MatmulEpilogueSavesItsAccumulator) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("dataset/matmul_bias_act.py", "residuals", 2);
    EXPECT_TRUE(has(src,
                    "    _tad_tl.store((TAD_SAVED_0_LIKE_C + rm[:, None] * stride_cm + rn[None, :] * stride_cn), "
                    "acc, mask=(rm[:, None] < M) & (rn[None, :] < N)); bias = "))
        << src;
    const std::string k = tad::test::kernel(src, "_matmul_bias_act_fwd_bwd_ACTIVATION_gelu_remapped");
    EXPECT_TRUE(has(k, "tl.load(TAD_SAVED_0_LIKE_C_final + ")) << k;
    EXPECT_FALSE(has(k, "tl.dot(")) << k;
    EXPECT_TRUE(has(k, "tl.store(dacc_stash + ")) << k;
    for (const char *name : {"_matmul_bias_act_fwd_bwd_ACTIVATION_gelu_remapped_DA",
                             "_matmul_bias_act_fwd_bwd_ACTIVATION_gelu_remapped_DB",
                             "_matmul_bias_act_fwd_bwd_ACTIVATION_relu_remapped_DA",
                             "_matmul_bias_act_fwd_bwd_ACTIVATION_relu_remapped_DB"}) {
        const std::string t = tad::test::kernel(src, name);
        EXPECT_TRUE(has(t, "tl.load(dacc_stash + ")) << t;
        EXPECT_FALSE(has(t, "tl.erf(")) << t;
    }
}

// Split-K decode attention: one query row per program, a scalar running maximum, and an accumulator
// of sum(p[:, None] * v, axis=0). It recomputes no prefix of the loop, and does not run the loop
// again either: it reads back the logsumexp (PartLse) and the normalised row (PartO, stored masked by
// dims < D, lanes within the row) the forward saved.
TEST(ClosedFormScalarMaximum, DecodeAttentionReadsItsRowBack) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src =
        tad::test::generate_and_verify("dataset/decode_attention_split.py", "_decode_partial_bwd", 2);
    const std::string k = tad::test::kernel(src, "_decode_partial_bwd");
    EXPECT_FALSE(recomputes(k, "start")) << k;
    EXPECT_EQ(tad::test::count(k, "for start in range(lo, hi, BLOCK_N):"), 1) << k;
    EXPECT_TRUE(has(k, "tl.load(PartO_final + ")) << k;
    EXPECT_TRUE(has(k, "tl.load(PartLse_final + ")) << k;
}

TEST(ShiftInvariantMaxima, SoftmaxSendsNothingBackThroughItsMaximum) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::pair<const char *, const char *> files[] = {{"examples/softmax.py", "_softmax_fwd_bwd"},
                                                           {"dataset/log_softmax.py", "_log_softmax_fwd_bwd"}};
    for (const auto &[file, name] : files) {
        const std::string src = tad::test::generate_and_verify(file, "held maximum", 2);
        const std::string k = tad::test::kernel(src, name);
        ASSERT_FALSE(k.empty()) << src;
        EXPECT_FALSE(has(k, " == ")) << k;  // the lanes equal to the maximum get nothing extra
        EXPECT_EQ(tad::test::count(k, "tl.max("), 1) << k;
    }
}

// x - max(x) stored, and a softmax along rows of maxima taken down the columns.
TEST(ShiftInvariantMaxima, AMaximumTheOutputMovesWithKeepsItsGradient) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::pair<const char *, const char *> files[] = {
        {"tests/pipeline/data/closed_form/centered.py", "_centered_bwd"},
        {"tests/pipeline/data/closed_form/column_max.py", "_column_max_bwd"}};
    for (const auto &[file, name] : files) {
        const std::string src = tad::test::generate_and_verify(file, "kept", 2);
        EXPECT_TRUE(has(tad::test::kernel(src, name), " == ")) << src;
    }
}

}  // namespace

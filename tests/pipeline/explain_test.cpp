// The access analysis as `tad generate --explain` shows it (tad_candidate_explain): stored with the
// snapshot at generate time, per launch and gradient, exact text.
#include <gtest/gtest.h>

#include "../common/scoped_env.h"
#include "cpu_session.h"
#include "driver/session.h"
#include "support/fs.h"

using namespace tad;
using namespace tad::driver;
using tad::test::cpu_session;
using tad::test::kPython;
using tad::test::torch_available;

namespace {

const std::string kRoot = std::string(TAD_SOURCE_DIR) + "/";

std::string explain(const std::string &file) {
    fs::TempDir dir;
    auto s = cpu_session(dir, file);
    std::string id = s->generate(GenerateOptions{});
    EXPECT_EQ(s->candidate_explain(""), s->candidate_explain(id));
    return s->candidate_explain(id);
}

TEST(Explain, LayerNormRowsAreDisjointItsAffineParametersReducedOverRows) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const tad::testing::ScopedEnv partial("TAD_GRID_REDUCTION", "partial");
    EXPECT_EQ(
        explain("examples/layernorm.py"),
        "launch 0 _layernorm_fwd:\n"
        "  dB: reduced over grid axis 0\n"
        "    load at " +
            kRoot +
            "examples/layernorm.py:24:9: reduced over grid axis 0\n"
            "  dW: reduced over grid axis 0\n"
            "    load at " +
            kRoot +
            "examples/layernorm.py:23:9: reduced over grid axis 0\n"
            "  dX: disjoint: plain stores if stride >= N; no zero fill where the buffer's strides and sizes "
            "are (1, N), (stride, num_programs(0)) where BLOCK_SIZE >= N\n"
            "    load at " +
            kRoot +
            "examples/layernorm.py:16:9: disjoint\n"
            "  store at " +
            kRoot +
            "examples/layernorm.py:21:5: the backward reads 'mean' back from Mean (and, undone from it, the reduce_sum "
            "at " +
            kRoot + "examples/layernorm.py:17:12)\n  store at " + kRoot +
            "examples/layernorm.py:22:5: the backward reads 'rstd' back from Rstd (and, undone from it, the sqrt at " +
            kRoot + "examples/layernorm.py:20:18, the add at " + kRoot + "examples/layernorm.py:20:26)\n  store at " +
            kRoot +
            "examples/layernorm.py:26:5: 'y' not read back: its store is masked (and it is not a linear tile of "
            "loads, nor 0 off the mask, nor unread there)\n"
            "  _layernorm_fwd_bwd: regrid axis 0 over G: DB (partial, DB_slab, rows covered) DW (partial, DW_slab, "
            "rows covered)\n"
            "  _layernorm_fwd_bwd: the loop over the programs of axis 0 pipelined (its loads prefetched "
            "TAD_LOOP_STAGES - 1 iterations ahead)\n");
}

TEST(Explain, MatmulOperandsAreReducedOverTheOtherGridAxisAndTheLoop) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    std::string text = explain("dataset/matmul.py");
    EXPECT_NE(
        text.find("  dA: reduced over grid axis 1, moving with the loop at " + kRoot + "dataset/matmul.py:29:5\n"),
        std::string::npos)
        << text;
    EXPECT_NE(
        text.find("  dB: reduced over grid axis 0, moving with the loop at " + kRoot + "dataset/matmul.py:29:5\n"),
        std::string::npos)
        << text;
}

TEST(Explain, CrossEntropySplitsItsTargetScatterFromTheRow) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    std::string text = explain("dataset/cross_entropy.py");
    EXPECT_NE(text.find("; its other loads are disjoint: plain stores, then the scatter's atomic adds in a kernel of "
                        "their own if stride_row >= V; no zero fill where the buffer's strides and sizes are (1, V), "
                        "(stride_row, num_programs(0))\n"),
              std::string::npos)
        << text;
}

TEST(Explain, AttentionSplitsItsHeadAxis) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    std::string text = explain("dataset/flash_attention.py");
    EXPECT_NE(text.find("launch 0 _attn_fwd (CAUSAL=False):\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  dQ: disjoint: plain stores if stride_qn >= HEAD_DIM and "), std::string::npos) << text;
    EXPECT_NE(text.find("  dK: reduced over grid axis 0, moving with the loop at " + kRoot +
                        "dataset/flash_attention.py:42:5\n"),
              std::string::npos)
        << text;
}

}  // namespace

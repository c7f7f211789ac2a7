// Loop transposition on the CPU tier: gradients reduced over a loop and a grid axis get kernels that
// own their tiles (matmul's dA over (m, k) tiles looping over n, dB over (k, n) looping over m; a
// GEMV's dw; with TAD_TRANSPOSE_RECOMPUTE=1, attention's dK and dV together in one kernel over key
// blocks looping over the query blocks, the FlashAttention-2 schedule), and the CPU check (the plan runner, then the whole module on the interpreter) matches
// finite differences, for row-major and column-major operands (the two alternatives of the
// disjointness proof's guards), with sizes that are not multiples of the tiles. Each transposed
// kernel is launched with its tile's constexpr widened (passes/widen.h), as the launcher spells it,
// and with its free block sizes' targets; the plan runner runs them retiled. A matmul with an
// epilogue transposes through a stash (passes/stash.h): the rest stores dZ, dA and dB load it;
// attention's dK/dV kernel loads Delta = rowsum(dO·O) from the stash the rest stores. A loop whose
// end rises with the program id (causal attention, a block-causal GEMV) transposes too: its grid is
// the last program's trip count, and each program sums from the first program that has its
// iteration (passes/rising_end.h). The Triton
// tutorial's matmul (offsets wrapped `% M`, `% N`) transposes once its adds are unwrapped
// (passes/unwrap_adds.h). Kernels without masks (the tutorials' attention, a batched GEMV) transpose
// under the guard that the loop's step divides its range, which bounds their tiles. Adds to one
// buffer in two loops (the tutorial's causal attention and a block-causal GEMV, each with its key
// loop in two stages, the diagonal block's start moving with the program id) transpose into one
// kernel that sums both loops' adds; also where, as in the current tutorial, the loads go through
// tensor descriptors at row offsets the loops carry (the diagonal loop's offset at a key block
// differs among the query blocks: it is computed per block).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "../common/scoped_env.h"
#include "cpu_session.h"
#include "driver/session.h"
#include "support/fs.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::kPython;
using tad::test::torch_available;
using tad::testing::ScopedEnv;

namespace {

bool has(const std::string &src, const std::string &what) { return src.find(what) != std::string::npos; }

struct Case {
    // kernel: the transposed kernel's grid as the launcher spells it, and the fill of a gradient it
    // owns unless its stores are proved to reach every element on that grid (Alloc::run).
    const char *name, *file, *kernel;
    const char *recompute = "0";  // TAD_TRANSPOSE_RECOMPUTE
    // The free block sizes its launch passes (passes/widen.h: free_tiles), the stash it loads, or a
    // guard it is launched under, as the launcher spells them.
    const char *tiles = "";
};

std::string generate_and_verify(const Case &c, const char *mode) {
    ScopedEnv env("TAD_TRANSPOSE", mode), recompute("TAD_TRANSPOSE_RECOMPUTE", c.recompute);
    return tad::test::generate_and_verify(c.file, mode, 2);
}

class TransposeCpu : public ::testing::TestWithParam<Case> {};

TEST_P(TransposeCpu, OwnedTilesMatchFiniteDifferences) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = generate_and_verify(GetParam(), "on");
    EXPECT_TRUE(has(src, GetParam().kernel)) << src;
    EXPECT_TRUE(has(src, "in range(G):") || has(src, "in range(first, G):")) << src;
    EXPECT_TRUE(has(src, "loop transposed")) << src;
    EXPECT_TRUE(has(src, GetParam().tiles)) << src;
}

TEST_P(TransposeCpu, OffKeepsTheAtomics) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = generate_and_verify(GetParam(), "off");
    EXPECT_FALSE(has(src, GetParam().kernel)) << src;
    EXPECT_TRUE(has(src, "tl.atomic_add(")) << src;
}

INSTANTIATE_TEST_SUITE_P(
    Files, TransposeCpu,
    ::testing::Values(
        Case{"matmul", "dataset/matmul.py",
             "wide_block = _widen(a_[\"BLOCK_K\"], 8, ((a_[\"BLOCK_M\"], a_[\"BLOCK_K\"]),))\n        "
             "grid__ = _regrid(launches[0].grid, 1, len(range(0, _tdiv((a_[\"K\"] + "
             "(wide_block - 1)), wide_block), 1)))\n        "
             "_zero_unless_covered(d_a, ((a_[\"stride_am\"], a_[\"M\"]), (a_[\"stride_ak\"], a_[\"K\"]), ), "
             "a_[\"BLOCK_M\"]*_grid_size(grid__, 0) >= a_[\"M\"] and wide_block*_grid_size(grid__, 1) >= "
             "a_[\"K\"] and 0 not in grid__)\n        _matmul_fwd_bwd_DA[grid__]",
             "0", "_tiles=((\"BLOCK_M\", 0, 256), (\"BLOCK_N\", \"G\", 64))"},
        Case{"matmul_colmajor", "tests/pipeline/data/transpose/matmul_colmajor.py",
             "wide_block = _widen(a_[\"BLOCK_K\"], 8, ((a_[\"BLOCK_K\"], a_[\"BLOCK_N\"]),))\n        "
             "grid_ = _regrid(launches[0].grid, 0, len(range(0, _tdiv((a_[\"K\"] + "
             "(wide_block - 1)), wide_block), 1)))\n        "
             "_zero_unless_covered(d_b, ((a_[\"stride_bk\"], a_[\"K\"]), (a_[\"stride_bn\"], a_[\"N\"]), ), "
             "wide_block*_grid_size(grid_, 0) >= a_[\"K\"] and a_[\"BLOCK_N\"]*_grid_size(grid_, 1) >= "
             "a_[\"N\"] and 0 not in grid_)\n        _mm_bwd_DB[grid_]",
             "0", "_tiles=((\"BLOCK_M\", \"G\", 64), (\"BLOCK_N\", 1, 256))"},
        Case{"flash_attention", "dataset/flash_attention.py",
             "grid_ = _regrid(launches[0].grid, 0, len(range(0, a[\"N\"], a[\"BLOCK_N\"])))\n            "
             "_zero_unless_covered(d_k, ((a[\"stride_kn\"], a[\"N\"]), (1, a[\"HEAD_DIM\"]), "
             "(a[\"stride_kb\"], _tdiv(_grid_size(grid_, 1), a[\"H\"])), (a[\"stride_kh\"], a[\"H\"]), ), "
             "a[\"BLOCK_N\"]*_grid_size(grid_, 0) >= a[\"N\"] and 0 not in grid_)\n            "
             "_zero_unless_covered(d_v, ",
             "1", "dl_i_stash = _stash_buffer(math.prod(launches[0].grid) * a[\"BLOCK_M\"], "},
        Case{"matmul_epilogue", "tests/pipeline/data/transpose/matmul_epilogue.py",
             "grid__ = _regrid(launches[0].grid, 1, len(range(0, a_[\"K\"], wide_block)))\n        "
             "_zero_unless_covered(d_a, ((a_[\"stride_am\"], a_[\"M\"]), (a_[\"stride_ak\"], a_[\"K\"]), ), "
             "a_[\"BLOCK_M\"]*_grid_size(grid__, 0) >= a_[\"M\"] and wide_block*_grid_size(grid__, 1) >= "
             "a_[\"K\"] and 0 not in grid__)\n        _mm_silu_bwd_DA[grid__]"},
        Case{"matmul_wrapped", "tests/pipeline/data/transpose/matmul_wrapped.py",
             "wide_block = _widen(a_[\"BLOCK_K\"], 8, ((a_[\"BLOCK_M\"], a_[\"BLOCK_K\"]),))\n        "
             "grid__ = _regrid(launches[0].grid, 1, len(range(0, _tdiv((a_[\"K\"] + "
             "(wide_block - 1)), wide_block), 1)))\n        "
             "_zero_unless_covered(d_a, ((a_[\"stride_ak\"], a_[\"K\"]), (a_[\"stride_am\"], a_[\"M\"]), ), "
             "wide_block*_grid_size(grid__, 1) >= a_[\"K\"] and a_[\"BLOCK_M\"]*_grid_size(grid__, 0) >= "
             "a_[\"M\"] and 0 not in grid__)\n        _mm_wrapped_bwd_remapped_DA[grid__]",
             "0", "dacc_stash = _stash_buffer(math.prod(launches[0].grid) * a_[\"BLOCK_M\"] * a_[\"BLOCK_N\"], "},
        Case{"causal_gemv", "tests/pipeline/data/transpose/causal_gemv.py",
             "grid_ = _regrid(launches[0].grid, 0, len(range(0, min((((launches[0].grid + (1, 1))[0] - 1) + 1) * "
             "a_[\"BLOCK_M\"], a_[\"N\"]), a_[\"BLOCK_N\"])))\n        "
             "_zero_unless_covered(d_x, ((1, a_[\"N\"]), ), a_[\"BLOCK_N\"]*_grid_size(grid_, 0) >= a_[\"N\"] and "
             "0 not in grid_)\n        _causal_gemv_bwd_DX[grid_]",
             "0", "    for pid in range(first, G):\n"},
        Case{"flash_attention_causal", "dataset/flash_attention.py",
             "_regrid(launches[0].grid, 0, len(range(0, min((((launches[0].grid + (1, 1))[0] - 1) + 1) * "
             "a[\"BLOCK_M\"], a[\"N\"]), a[\"BLOCK_N\"])))",
             "1", "    for start_m in range(first, G):\n"},
        Case{"flash_attention_tutorial", "tests/pipeline/data/transpose/flash_attention_tutorial.py",
             "grid_ = _regrid(launches[0].grid, 0, len(range(0, a[\"N\"], a[\"BLOCK_N\"])))\n            "
             "_zero_unless_covered(d_k, ",
             "1", "a[\"BLOCK_N\"]*_tdiv(a[\"N\"], a[\"BLOCK_N\"]) >= a[\"N\"] and a[\"stride_n\"] >= a[\"HEAD_DIM\"]"},
        Case{"flash_attention_tutorial_causal", "tests/pipeline/data/transpose/flash_attention_tutorial.py",
             "_attn_fwd_bwd_STAGE_3_DV_DK[_regrid(launches[0].grid, 0, len(range(0, max((((launches[0].grid + (1, "
             "1))[0] - 1) + 1) * a[\"BLOCK_M\"], ((launches[0].grid + (1, 1))[0] - 1) * a[\"BLOCK_M\"]), "
             "a[\"BLOCK_N\"])))]",
             "1", "    for start_m in range(first, first_1):\n"},
        Case{"flash_attention_descriptors", "tests/pipeline/data/transpose/flash_attention_descriptors.py",
             "_attn_fwd_bwd_STAGE_3_DV_DK[_regrid(launches[0].grid, 0, len(range(0, max((((launches[0].grid + (1, "
             "1))[0] - 1) + 1) * a[\"BLOCK_M\"], ((launches[0].grid + (1, 1))[0] - 1) * a[\"BLOCK_M\"]), "
             "a[\"BLOCK_N\"])))]",
             "1", "    for start_m in range(first, first_1):\n"},
        Case{"causal_gemv_two_stage", "tests/pipeline/data/transpose/causal_gemv_two_stage.py",
             "_causal_gemv_bwd_DW[_regrid(launches[0].grid, 0, len(range(0, max((((launches[0].grid + (1, 1))[0] - "
             "1) + 1) * a[\"BLOCK_M\"], ((launches[0].grid + (1, 1))[0] - 1) * a[\"BLOCK_M\"]), "
             "a[\"BLOCK_N\"])))]",
             "0", "    for pid in range(first, first_1):\n"},
        Case{"bgemv_unmasked", "tests/pipeline/data/transpose/bgemv_unmasked.py",
             "_bgemv_bwd_DW[_regrid(launches[0].grid, 0, _cdiv(len(range(0, a[\"N\"], a[\"BLOCK_N\"])), 8))]", "0",
             "a[\"BLOCK_N\"]*_tdiv(a[\"N\"], a[\"BLOCK_N\"]) >= a[\"N\"] and a[\"stride_wh\"] >= a[\"N\"]"},
        Case{"gemv", "tests/pipeline/data/transpose/gemv.py",
             "wide_block = _widen(a[\"BLOCK_N\"], 8, ((a[\"BLOCK_N\"],),))\n        "
             "grid_ = _regrid(launches[0].grid, 0, len(range(0, _tdiv((a[\"N\"] + "
             "(wide_block - 1)), wide_block), 1)))\n        "
             "_zero_unless_covered(d_w, ((1, a[\"N\"]), ), wide_block*_grid_size(grid_, 0) >= a[\"N\"] and 0 not in "
             "grid_)\n"
             "        _gemv_bwd_DW[grid_]",
             "0", "_tiles=((\"BLOCK_M\", \"G\", 0),)"}),
    [](const auto &info) { return std::string(info.param.name); });

// One buffer's adds in two loops are summed by one kernel or stay atomic: a grid of two axes whose
// buffers are shared along either (W and V along axis 0, A along axis 1, W and A in both loops), and
// a buffer shared along axis 0 in one loop and axis 1 in the other (atomic).
TEST(TransposeCpuLoops, EachBufferIsStoredByOneKernel) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    ScopedEnv env("TAD_TRANSPOSE", "on");
    std::string src = tad::test::generate_and_verify("tests/pipeline/data/transpose/two_axes_two_loops.py", "on", 2);
    EXPECT_FALSE(has(src, "def _k_bwd_DW(")) << src;
    const std::string k = tad::test::kernel(src, "_k_bwd_DW_DV");
    EXPECT_EQ(tad::test::count(k, "for i in range("), 2) << k;
    EXPECT_EQ(tad::test::count(k, "tl.store(DW + "), 1) << k;
    src = tad::test::generate_and_verify("tests/pipeline/data/transpose/one_buffer_two_axes.py", "on", 2);
    EXPECT_TRUE(has(src, "tl.atomic_add(DW + ")) << src;
}

// RMSNorm through tensor descriptors: dW is transposed, and what is left writes dX by adds that the
// access proof turns into stores only under a run-time stride guard. The guarded variant stores; the
// variant after it keeps the adds, with transposed kernels of its own name.
TEST(TransposeCpuStores, RestStoresUnderGuardsWithTheAddsAfter) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify("dataset/rmsnorm_tensor_desc.py", "on", 2);
    const std::string rest = tad::test::kernel(src, "_rmsnorm_td_fwd_bwd");
    EXPECT_TRUE(has(rest, "tl.store(DX + ")) << rest;
    EXPECT_FALSE(has(rest, "tl.atomic_add(")) << rest;
    EXPECT_TRUE(has(tad::test::kernel(src, "_rmsnorm_td_fwd_bwd_adds"), "tl.atomic_add(DX + ")) << src;
    EXPECT_TRUE(has(src, "_rmsnorm_td_fwd_bwd_DW[")) << src;
    EXPECT_TRUE(has(src, "_rmsnorm_td_fwd_bwd_adds_DW[")) << src;
}

TEST(TransposeCpuStash, EpilogueGradientIsStoredOnceAndLoadedByBothKernels) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = generate_and_verify(Case{"", "tests/pipeline/data/transpose/matmul_epilogue.py", ""}, "on");
    EXPECT_TRUE(has(src,
                    "dz_stash = _stash_buffer(math.prod(launches[0].grid) * a_[\"BLOCK_M\"] * "
                    "a_[\"BLOCK_N\"], out_layouts[0], a.dtype)"))
        << src;
    EXPECT_TRUE(has(src, "tl.store(dz_stash + ")) << src;
    EXPECT_TRUE(has(src, "_mm_silu_bwd_DB[")) << src;
    EXPECT_TRUE(has(src, "_mm_silu_bwd_DA[")) << src;
}

}  // namespace

// The persistent re-grid on the CPU tier: the generated module re-grids the backward of kernels whose
// gradients are summed over the grid, and the CPU check (plan runner with P = min(G, 3) programs, so
// programs loop over several rows and the loop's tail matters; then the whole module on the
// interpreter) matches finite differences, with the partial-buffer flush and with the atomic one.
// The loop over rows is pipelined (passes/pipeline_loops.h): the module sets its stages constexpr.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "../common/scoped_env.h"
#include "cpu_session.h"
#include "driver/session.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::test::kPython;
using tad::test::torch_available;

namespace {

using tad::testing::ScopedEnv;

bool has(const std::string &src, const std::string &what) { return src.find(what) != std::string::npos; }

// Generates `file` under `mode` and checks it on the CPU tier (both SWEEP entries, G = 4..37 rows on
// P = 3 programs); returns the module.
std::string generate_and_verify(const char *file, const char *mode) {
    ScopedEnv env("TAD_GRID_REDUCTION", mode);
    return tad::test::generate_and_verify(file, mode, 2);
}

struct Case {
    const char *name, *file;
};

class RegridCpu : public ::testing::TestWithParam<Case> {};

TEST_P(RegridCpu, PartialBufferFlushHasNoAtomics) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = generate_and_verify(GetParam().file, "partial");
    EXPECT_TRUE(has(src, "for r in tl.range(")) << src;
    EXPECT_TRUE(has(src, ", num_stages=TAD_LOOP_STAGES):")) << src;
    EXPECT_TRUE(has(src, ", TAD_LOOP_STAGES: tl.constexpr):")) << src;
    EXPECT_TRUE(has(src, "_regrid(launches[0].grid, 0, programs)")) << src;
    // Nothing else writes the re-gridded gradients: each is its partial rows' sum (no zero fill, no add).
    EXPECT_TRUE(has(src, " = _partial_sum(")) << src;
    EXPECT_FALSE(has(src, "    _sum_partial(")) << src;
    EXPECT_FALSE(has(src, "tl.atomic_add(")) << src;
}

TEST_P(RegridCpu, AtomicFlushOption) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = generate_and_verify(GetParam().file, "atomic");
    EXPECT_TRUE(has(src, "for r in tl.range(")) << src;
    EXPECT_TRUE(has(src, "tl.atomic_add(")) << src;
    EXPECT_FALSE(has(src, "= _partial_buffers(")) << src;
}

TEST_P(RegridCpu, OffKeepsTheForwardGrid) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = generate_and_verify(GetParam().file, "off");
    EXPECT_FALSE(has(src, "[_regrid(launches")) << src;
    EXPECT_TRUE(has(src, "tl.atomic_add(")) << src;
}

// bias_grad.py with its bias named like the stages' constexpr: the backward renames it, and still
// pipelines.
TEST(RegridCpu, AValueNamedLikeTheLoopStagesIsRenamed) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    std::string text = fs::read_file(std::string(TAD_SOURCE_DIR) + "/tests/pipeline/data/bias_grad.py");
    const std::pair<std::string, std::string> renames[] = {
        {"    b = tl.load(B", "    TAD_LOOP_STAGES = tl.load(B"},
        {"tl.exp(x * b) + b,", "tl.exp(x * TAD_LOOP_STAGES) + TAD_LOOP_STAGES,"}};
    for (const auto &[from, to] : renames) {
        const size_t at = text.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        text.replace(at, from.size(), to);
    }
    fs::TempDir dir;
    const std::string file = dir.path() + "/loop_stages_name.py";
    fs::write_file_atomic(file, text);
    const std::string src = generate_and_verify(file.c_str(), "partial");
    EXPECT_TRUE(has(src, ", num_stages=TAD_LOOP_STAGES):")) << src;
    EXPECT_TRUE(has(src, "TAD_LOOP_STAGES_1 = ")) << src;
}

// qk_rmsnorm's weight gradient: every program of its 3-D grid (token blocks, heads, batch) adds
// into it. Re-gridded over the three axes at once: P programs along axis 0 loop over the
// G0 * G1 * G2 forward programs (P = 3 on the CPU tier, so each decodes several (t, h, b)).
TEST(RegridCpu, AWeightSharedByEveryAxisIsReducedOverAllThree) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = generate_and_verify("dataset/qk_rmsnorm.py", "partial");
    EXPECT_TRUE(has(src, "_regrid(launches[0].grid, (0, 1, 2), programs)")) << src;
    EXPECT_TRUE(has(src, "_grid_size(launches[0].grid, 2)")) << src;
    EXPECT_TRUE(has(src, " = _partial_sum(")) << src;
    EXPECT_FALSE(has(src, "tl.atomic_add(")) << src;
}

// A per-channel gate's gradient on a 3-D grid, summed over token blocks (axis 0) and batch (axis 2);
// the channel blocks of axis 1 keep their programs. P = 3 programs loop over G0 * G2 = 4·2 and 3·3.
TEST(RegridCpu, APerChannelGradientKeepsTheAxisThatAddressesIt) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = generate_and_verify("tests/pipeline/data/channel_gate_3d.py", "partial");
    EXPECT_TRUE(has(src, "_regrid(launches[0].grid, (0, 2), programs)")) << src;
    EXPECT_TRUE(has(src, "_grid_size(launches[0].grid, 0), _grid_size(launches[0].grid, 2)")) << src;
    EXPECT_FALSE(has(src, "tl.atomic_add(")) << src;
}

// FiLM's per-sample gradients (at b · stride_gb + c, c < C) are distinct across samples only if
// their rows do not overlap: re-gridded under that run-time condition, with the kernel on the
// forward's grid after it for launches that fail it.
TEST(RegridCpu, AFlushDistinctUnderAConditionIsGuarded) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = generate_and_verify("dataset/film.py", "partial");
    EXPECT_TRUE(has(src, "_film_fwd_bwd[_regrid(launches[0].grid, 0, programs)]")) << src;
    EXPECT_TRUE(has(src, "(a[\"stride_gb\"] >= a[\"C\"])")) << src;
    EXPECT_TRUE(has(src, "_film_fwd_bwd_unregridded[launches[0].grid]")) << src;
}

// Unrolled taps adding into one weight gradient, each at its column of the channel's row: one
// accumulator per tap, all flushed into one partial row, under the condition that a channel's taps
// do not reach the next channel's (stride_wc >= W); a weight with unused columns (stride W + 2)
// too. A causal convolution's weight gradient the same way, beside its bias gradient.
TEST(RegridCpu, TapsIntoOneGradientFlushIntoOneRow) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = generate_and_verify("tests/pipeline/data/taps/channel_poly.py", "partial");
    for (const char *name : {"_channel_poly_bwd_WIDTH_3", "_channel_poly_bwd_WIDTH_4"}) {
        const std::string k = tad::test::kernel(src, name);
        EXPECT_TRUE(has(k, "DWt_slab")) << name << "\n" << src;
        EXPECT_FALSE(has(k, "tl.atomic_add(")) << k;
    }
    EXPECT_TRUE(has(src, "(a[\"stride_wc\"] >= 4)")) << src;
    EXPECT_TRUE(has(src, "_channel_poly_bwd_WIDTH_4_unregridded[launches[0].grid]")) << src;
    // Two weights' taps added in turn: each sum reaches its own accumulator, in both flushes.
    const std::string two = generate_and_verify("tests/pipeline/data/taps/two_weights.py", "partial");
    EXPECT_FALSE(has(tad::test::kernel(two, "_two_poly_bwd_WIDTH_3"), "tl.atomic_add(")) << two;
    generate_and_verify("tests/pipeline/data/taps/two_weights.py", "atomic");
    const std::string conv = generate_and_verify("dataset/causal_conv1d.py", "partial");
    const std::string none = tad::test::kernel(conv, "_causal_conv1d_fwd_bwd_WIDTH_3_ACTIVATION_none");
    EXPECT_TRUE(has(none, "DWt: summed per program, one row of a partial buffer per program.")) << none;
    EXPECT_FALSE(has(none, "tl.atomic_add(")) << none;
}

// One tensor passed as two parameters whose gradients are both summed over the rows: their partial
// rows would share one buffer, the second flush overwriting the first. The plan refuses, naming the
// workaround; with it the sums are atomic adds into the one gradient, and right.
TEST(RegridCpu, TwoParametersOfOneTensorAreRefusedInPartialRows) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    fs::TempDir dir;
    auto s = tad::test::cpu_session(dir, "tests/pipeline/data/tied_partials.py");
    try {
        s->generate(GenerateOptions{});
        ADD_FAILURE() << "generated a backward whose partial rows overwrite each other";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_UNSUPPORTED);
        EXPECT_EQ(std::string(e.what()),
                  "plan: launch 0 (_scale_shift): its re-gridded backward _scale_shift_bwd sums DB and DA, bound "
                  "to one tensor, in partial rows; regenerate with TAD_GRID_REDUCTION=atomic");
    }
    const std::string src = generate_and_verify("tests/pipeline/data/tied_partials.py", "atomic");
    EXPECT_TRUE(has(src, "tl.atomic_add(")) << src;
}

INSTANTIATE_TEST_SUITE_P(Files, RegridCpu,
                         ::testing::Values(Case{"layernorm", "examples/layernorm.py"},
                                           Case{"bias_grad", "tests/pipeline/data/bias_grad.py"}),
                         [](const auto &info) { return std::string(info.param.name); });

}  // namespace

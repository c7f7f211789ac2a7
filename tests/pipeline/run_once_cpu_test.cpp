// Loops that run once, on the CPU tier (passes/run_once.h): a LayerNorm that walks its row in
// column blocks gets a variant for launches whose block covers the row, guarded by N >= 1 and
// BLOCK >= N, whose backward sums dW and dB in registers over a re-grid instead of adding each row
// atomically; a row past the block's 64 KB cap (N = 9000 in float64) runs the loops twice and the
// variants after it apply. Both match finite differences. TAD_RUN_ONCE=off leaves the variant out.
#include <gtest/gtest.h>

#include <string>

#include "../common/scoped_env.h"
#include "cpu_session.h"

using tad::test::kPython;
using tad::test::torch_available;
using tad::testing::ScopedEnv;

namespace {

bool has(const std::string &src, const std::string &what) { return src.find(what) != std::string::npos; }

constexpr const char *kFile = "tests/pipeline/data/run_once/layernorm_loops.py";

TEST(RunOnceCpu, ColumnLoopsRunOnceWhereTheBlockCoversTheRow) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    const std::string src = tad::test::generate_and_verify(kFile, "run once", 3);
    EXPECT_TRUE(has(src, "    if a[\"N\"] >= 1 and a[\"BLOCK\"] >= a[\"N\"]:\n")) << src;
    EXPECT_TRUE(has(src, "_ln_loops_bwd_once[_regrid(launches[0].grid, 0, programs)](")) << src;
    const std::string once = tad::test::kernel(src, "_ln_loops_bwd_once");
    EXPECT_FALSE(has(once, "tl.atomic_add(")) << once;
    EXPECT_TRUE(has(once, "for r in tl.range(")) << once;
    EXPECT_TRUE(has(src, "\n    else:\n")) << src;  // the variants for several iterations follow
}

TEST(RunOnceCpu, OffLeavesTheVariantOut) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    ScopedEnv env("TAD_RUN_ONCE", "off");
    const std::string src = tad::test::generate_and_verify(kFile, "run once off", 3);
    EXPECT_FALSE(has(src, "_bwd_once")) << src;
}

}  // namespace

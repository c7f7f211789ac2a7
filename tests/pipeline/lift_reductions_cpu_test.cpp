// Reductions lifted out of loops (passes/lift_reductions.h) on the CPU tier: the backwards whose loops
// carried running reductions carry tiles instead, and still match finite differences.
#include <gtest/gtest.h>

#include <string>

#include "../common/scoped_env.h"
#include "cpu_session.h"

namespace {

using tad::test::kernel;
using tad::testing::ScopedEnv;

// Whether a line before `end` starts a zero tile that is not a run of per-channel adds
// (segment_atomics.h's `DB_run = tl.full(...)`, there in both modes).
bool statistic_tile_before(const std::string &k, size_t end) {
    for (size_t at = k.find("tl.full((BLOCK_SIZE,), 0.0, tl.float32)"); at < end;
         at = k.find("tl.full((BLOCK_SIZE,), 0.0, tl.float32)", at + 1)) {
        const size_t line = k.rfind('\n', at) + 1;
        if (k.substr(line, at - line).find("_run = ") == std::string::npos) return true;
    }
    return false;
}

// Group norm's dmean and drstd: zero tiles before the first loop, summed after the loops; with
// TAD_LIFT_REDUCTIONS=off, scalars reduced in every iteration.
TEST(LiftReductionsCpu, GroupNormCarriesItsStatisticsAsTiles) {
    REQUIRE_TORCH();
    for (const char *mode : {"on", "off"}) {
        ScopedEnv env("TAD_LIFT_REDUCTIONS", mode);
        const std::string k =
            kernel(tad::test::generate_and_verify("dataset/group_norm.py", mode, 2), "_group_norm_fwd_bwd");
        const size_t loop = k.find("for start in");
        ASSERT_NE(loop, std::string::npos) << k;
        EXPECT_EQ(statistic_tile_before(k, loop), std::string(mode) == "on") << mode << ":\n" << k;
        EXPECT_EQ(k.find("dmean + tl.sum(") == std::string::npos, std::string(mode) == "on") << mode << ":\n" << k;
    }
}

}  // namespace

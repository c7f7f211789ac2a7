// Reductions lifted out of loops (passes/lift_reductions.h) on the CPU tier: the backwards whose loops
// carried running reductions carry tiles instead, and still match finite differences.
#include <gtest/gtest.h>

#include <string>

#include "../common/scoped_env.h"
#include "cpu_session.h"

namespace {

using tad::test::kernel;
using tad::testing::ScopedEnv;

// Group norm's dmean and drstd: zero tiles before the first loop, summed after the loops; with
// TAD_LIFT_REDUCTIONS=off, scalars reduced in every iteration.
TEST(LiftReductionsCpu, GroupNormCarriesItsStatisticsAsTiles) {
    REQUIRE_TORCH();
    for (const char *mode : {"on", "off"}) {
        ScopedEnv env("TAD_LIFT_REDUCTIONS", mode);
        const std::string k =
            kernel(tad::test::generate_and_verify("dataset/group_norm.py", mode, 2), "_group_norm_fwd_bwd");
        const size_t tile = k.find("tl.full((BLOCK_SIZE,), 0.0, tl.float32)"), loop = k.find("for start in");
        ASSERT_NE(loop, std::string::npos) << k;
        EXPECT_EQ(tile != std::string::npos && tile < loop, std::string(mode) == "on") << mode << ":\n" << k;
        EXPECT_EQ(k.find("dmean + tl.sum(") == std::string::npos, std::string(mode) == "on") << mode << ":\n" << k;
    }
}

}  // namespace

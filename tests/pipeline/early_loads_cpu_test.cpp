// Early loads (passes/early_loads.h) on the CPU tier: the generated backwards, reordered, still match
// finite differences, and the reordering is what the emitted kernel shows.
#include <gtest/gtest.h>

#include <string>

#include "../common/scoped_env.h"
#include "cpu_session.h"

namespace {

using tad::test::kernel;
using tad::testing::ScopedEnv;

// Softmax's backward loads the row of DY before it reduces the row of X again; with
// TAD_EARLY_LOADS=off, after.
TEST(EarlyLoadsCpu, SoftmaxLoadsDyBeforeItsReductions) {
    REQUIRE_TORCH();
    for (const char *mode : {"on", "off"}) {
        ScopedEnv env("TAD_EARLY_LOADS", mode);
        const std::string k =
            kernel(tad::test::generate_and_verify("examples/softmax.py", mode, 2), "_softmax_fwd_bwd");
        const size_t dy = k.find("tl.load(DY"), max = k.find("tl.max(");
        ASSERT_NE(dy, std::string::npos) << k;
        ASSERT_NE(max, std::string::npos) << k;
        EXPECT_EQ(dy < max, std::string(mode) == "on") << mode << ":\n" << k;
    }
}

// Group norm's backward loops load before they reduce, and the atomic adds into DW and DB fence
// their bodies: the pass leaves the kernel as reverse mode wrote it.
TEST(EarlyLoadsCpu, GroupNormLoopsWithoutALoadBehindAReductionStay) {
    REQUIRE_TORCH();
    std::string on, off;
    {
        ScopedEnv env("TAD_EARLY_LOADS", "on");
        on = kernel(tad::test::generate_and_verify("dataset/group_norm.py", "on", 2), "_group_norm_fwd_bwd");
    }
    {
        ScopedEnv env("TAD_EARLY_LOADS", "off");
        off = kernel(tad::test::generate_and_verify("dataset/group_norm.py", "off", 2), "_group_norm_fwd_bwd");
    }
    ASSERT_NE(on.find("tl.atomic_add("), std::string::npos) << on;
    EXPECT_EQ(on, off);
}

}  // namespace

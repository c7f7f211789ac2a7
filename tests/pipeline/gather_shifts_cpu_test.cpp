// Adds at shifted lanes gathered and stored, on the CPU tier: token shift's dX (its own row and
// the next row's share), a causal convolution's four taps (without an activation: with the SiLU,
// the copies would cost more than the adds, which stay), and a grid that runs only a prefix of
// the rows its masks allow (tests/pipeline/data/gather/prefix_shift.py: the last row run must not
// gather the next row's term, which no program computed); and the review's counterexamples: a load
// masked by the shifted lanes through a pointer that does not vary with them, gathered; and, refused,
// a range on two dims of a tile or of a length no launch records, a sum over every dim, a second
// range along the shifted dim, and a lane index a cumulative sum makes.
#include <gtest/gtest.h>

#include <string>

#include "cpu_session.h"

namespace {

using tad::test::count;
using tad::test::kernel;

TEST(GatherShiftsCpu, TokenShiftStoresDxOnce) {
    REQUIRE_TORCH();
    const std::string src = tad::test::generate_and_verify("dataset/token_shift.py", "gathered", 2);
    const std::string k = kernel(src, "_token_shift_fwd_bwd");
    EXPECT_EQ(count(k, "tl.store(DX + "), 1) << k;
    EXPECT_EQ(count(k, "tl.atomic_add(DX"), 0) << k;
    EXPECT_GT(count(kernel(src, "_token_shift_fwd_bwd_adds"), "tl.atomic_add(DX"), 0) << src;
}

TEST(GatherShiftsCpu, CausalConvolutionStoresDxOnce) {
    REQUIRE_TORCH();
    const std::string src = tad::test::generate_and_verify("dataset/causal_conv1d.py", "gathered", 2);
    const std::string k = kernel(src, "_causal_conv1d_fwd_bwd_WIDTH_4_ACTIVATION_none");
    ASSERT_EQ(count(k, "tl.store(DX + "), 1) << k;
    EXPECT_EQ(count(k, "tl.atomic_add(DX"), 0) << k;
    const size_t at = k.find("tl.store(DX + ");
    EXPECT_EQ(count(k.substr(at, k.find('\n', at) - at), "tl.where("), 3) << k;  // a term per shifted tap
    // With the SiLU, each tap's copy would recompute the activation's input from four loads of x.
    EXPECT_EQ(count(kernel(src, "_causal_conv1d_fwd_bwd_WIDTH_4_ACTIVATION_silu"), ", dx, mask="), 4) << src;
}

TEST(GatherShiftsCpu, PrefixGridGathersOnlyRowsItRuns) {
    REQUIRE_TORCH();
    const std::string src = tad::test::generate_and_verify("tests/pipeline/data/gather/prefix_shift.py", "gathered", 3);
    const std::string k = kernel(src, "_prefix_shift_bwd");
    EXPECT_EQ(count(k, "tl.store(DX + "), 1) << k;
    EXPECT_EQ(count(k, "< BLOCK_T * tl.minimum(tl.num_programs(0) - "), 1) << k;
}

TEST(GatherShiftsCpu, LoadMaskedByTheShiftedLanesAlongItsOwnDim) {
    REQUIRE_TORCH();
    const std::string src = tad::test::generate_and_verify("tests/pipeline/data/gather/masked_scale.py", "gathered", 2);
    EXPECT_EQ(count(kernel(src, "_scal2_bwd"), "tl.store(DX + "), 1) << src;
}

TEST(GatherShiftsCpu, CopiesThatWouldReadOtherLanesKeepTheAdds) {
    REQUIRE_TORCH();
    for (const char *file : {"tests/pipeline/data/gather/two_dims.py", "tests/pipeline/data/gather/doubled_block.py",
                             "tests/pipeline/data/gather/sum_of_block.py", "tests/pipeline/data/gather/second_range.py",
                             "tests/pipeline/data/gather/scanned_lane.py"}) {
        const std::string src = tad::test::generate_and_verify(file, "refused", 2);
        EXPECT_EQ(count(src, "tl.store(DX"), 0) << src;
        EXPECT_EQ(count(src, "tl.num_programs(0) * "), 0) << src;  // no bound of the lanes run: no gather
        EXPECT_GT(count(src, "tl.atomic_add("), 0) << src;
    }
}

}  // namespace

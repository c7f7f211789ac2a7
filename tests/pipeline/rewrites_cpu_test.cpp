// Buffers a program may write an element of twice (passes/rewrites.h), on the CPU tier: the reverse
// of such a loop runs last iteration first and zeroes the cotangent it read, so that the lost
// writes get no gradient; where the proof of single writes needs run-time conditions, the module
// checks them and refuses a layout that breaks them.
#include <gtest/gtest.h>

#include <string>

#include "cpu_session.h"

namespace {

using tad::test::count;
using tad::test::kernel;

// Steps t and t + 1 write row t // 2: only the later write's x gets a gradient.
TEST(RewritesCpu, HalvedRowsReverseLastStepFirst) {
    REQUIRE_TORCH();
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/rewrites/halved_rows.py", "rewrites", 2);
    const std::string k = kernel(src, "_halved_rows_bwd");
    EXPECT_EQ(count(k, "for back in range(trips):"), 1) << k;
    EXPECT_EQ(count(k, "tl.store(t4, 0.0, mask=mask)"), 1) << k;
    EXPECT_EQ(count(src, "assumes that a program writes each element"), 0) << src;
}

// Rows S apart, each C long: written once where S >= C (or there is one row), which the module
// checks before the backward runs. The SWEEP's second entry (S = 8 < C = 12) is refused, the first verified.
TEST(RewritesCpu, OverlappingRowsAreRefusedAtRunTime) {
    REQUIRE_TORCH();
    tad::fs::TempDir dir;
    auto s = tad::test::cpu_session(dir, "tests/pipeline/data/rewrites/overlapping_rows.py");
    const std::string src = s->candidate_source(s->generate(tad::driver::GenerateOptions{}));
    EXPECT_EQ(count(src,
                    "    if not (((a[\"stride_ht\"] >= a[\"C\"]) or (a[\"stride_ht\"] >= 1 and 1 >= "
                    "a[\"T\"]*a[\"stride_ht\"] - a[\"stride_ht\"] + 1))):\n"),
              1)
        << src;
    tad::driver::VerifyOptions v;
    v.cpu = true;
    bool passed = true;
    tad::Json r = tad::Json::parse(s->verify(v, &passed), "report");
    EXPECT_FALSE(passed);
    ASSERT_EQ(r.at("results").size(), 2u) << r.dump(true);
    EXPECT_EQ(r.at("results")[0].at("status").str(), "pass") << r.dump(true);
    EXPECT_EQ(r.at("results")[1].at("status").str(), "error") << r.dump(true);
    const std::string report = r.dump(false);
    EXPECT_NE(report.find("tad: the backward of _overlapping_rows assumes that a program writes each element of Hs "
                          "once ("),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("data/rewrites/overlapping_rows.py:21:9), which holds where ((stride_ht >= C) or (stride_ht "
                          ">= 1 and 1 >= T*stride_ht - stride_ht + 1)); these arguments do not ensure it"),
              std::string::npos)
        << report;
}

// A persistent kernel walking its tiles in order, several tiles of a row storing that row: the
// backward walks them in reverse (zeroing y's cotangent once read), and is not re-gridded onto the
// tiles, where they would be programs racing for the row.
TEST(RewritesCpu, PersistentTilesOfOneRowAreNotRegridded) {
    REQUIRE_TORCH();
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/rewrites/persistent_tiles.py", "rewrites", 2);
    EXPECT_EQ(count(src, "_remapped"), 0) << src;
    EXPECT_EQ(count(kernel(src, "_persistent_tiles_bwd"), "for back in range(trips):"), 1) << src;
}

// dataset/persistent_matmul.py: C is written once only where the programs map one to one onto its
// tiles, which the module checks (with C's layout) before running the backward on them; no variant
// on the forward as it is remains.
TEST(RewritesCpu, PersistentMatmulRunsOnItsTilesOrRefuses) {
    REQUIRE_TORCH();
    const std::string src = tad::test::generate_and_verify("dataset/persistent_matmul.py", "rewrites", 2);
    EXPECT_EQ(count(src, "    if not ((box is not None) and ((a_[\"stride_cm\"] >= 1 and"), 1) << src;
    EXPECT_EQ(count(src, "_persistent_matmul_fwd_bwd["), 0) << src;
    EXPECT_EQ(count(src, "_persistent_matmul_fwd_bwd_remapped_DA["), 1) << src;
}

// A row accumulated in memory across a loop's steps (loaded and stored through one pointer each
// step) is refused, naming the load; one store whose lanes write one element is refused, naming
// the store. Both gave wrong gradients before.
TEST(RewritesCpu, MemoryCarriedAcrossIterationsAndRepeatedLanesAreRefused) {
    REQUIRE_TORCH();
    tad::test::expect_refused("tests/pipeline/data/rewrites/accumulated_rows.py",
                              "data/rewrites/accumulated_rows.py:18:15); a launch that updates a "
                              "differentiated buffer must read each element before writing it, through the same "
                              "pointer, and not in a later iteration of a loop (carry such a value in a variable)");
    tad::test::expect_refused("tests/pipeline/data/rewrites/broadcast_store.py",
                              "data/rewrites/broadcast_store.py:17:5: unsupported construct 'store': lanes of its tile "
                              "write one element (its address does not move along a dim of the tile); store a scalar "
                              "instead");
}

// One output passed as two parameters: the later store's reverse reads the cotangent, the earlier
// one's a zeroed one.
TEST(RewritesCpu, OneTensorStoredThroughTwoParameters) {
    REQUIRE_TORCH();
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/rewrites/aliased_outputs.py", "rewrites", 2);
    EXPECT_EQ(count(kernel(src, "_aliased_outputs_bwd"), "tl.debug_barrier()"), 4) << src;
}

// Column-major tiles of a persistent loop: written once per program where the launch has no more
// programs than the loop's step; the CPU tier runs it (refused at run time before).
TEST(RewritesCpu, PersistentColumnMajorTilesAreWrittenOnce) {
    REQUIRE_TORCH();
    const std::string src =
        tad::test::generate_and_verify("tests/pipeline/data/rewrites/persistent_column_major.py", "rewrites", 2);
    EXPECT_NE(src.find("NUM_PROGRAMS >= num_programs(0)"), std::string::npos) << src;
}

}  // namespace

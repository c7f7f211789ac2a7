// Tile coordinates from program ids on the CPU tier (passes/remap_programs.h): the backward derived
// from the kernel rewritten on its coordinates runs where the launch's programs map one to one onto
// a box of them, the original kernel's elsewhere; both match finite differences
// (tests/pipeline/data/remap/).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "../common/scoped_env.h"
#include "cpu_session.h"
#include "ir/ir.h"
#include "passes/remap_programs.h"

using tad::test::count;
using tad::test::generate_and_verify;
using tad::testing::ScopedEnv;

namespace {

struct Case {
    const char *file;  // under tests/pipeline/data/remap/
    std::vector<const char *> present;  // text the generated module has
    std::vector<const char *> absent;  // text it has not
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.file; }

class RemapCpu : public ::testing::TestWithParam<Case> {};

TEST_P(RemapCpu, BothSchedulesMatchFiniteDifferences) {
    REQUIRE_TORCH();
    const Case &c = GetParam();
    const std::string src = generate_and_verify(std::string("tests/pipeline/data/remap/") + c.file + ".py", "on", 2);
    for (const char *text : c.present) EXPECT_GE(count(src, text), 1) << text << "\n" << src;
    for (const char *text : c.absent) EXPECT_EQ(count(src, text), 0) << text << "\n" << src;
}

INSTANTIATE_TEST_SUITE_P(
    Data, RemapCpu,
    ::testing::Values(
        // dA and dB transposed on the tiles' grid; the launch with extra programs keeps the atomics.
        Case{"grouped_matmul",
             {"def _grouped_mm_bwd_remapped_DA(", "def _grouped_mm_bwd_remapped_DB(",
              "box = _program_box(launches[0].grid, lambda p: ", "launches = _with_grid(launches, 0, box)",
              "def _grouped_mm_bwd("},
             {}},
        // The access analysis follows batch and head split from one axis already: nothing to gain.
        Case{"batch_head", {"def _head_scale_bwd("}, {"_remapped", "_program_box(launches"}},
        // A persistent loop's iterations become the tiles' programs: dw summed over tile rows.
        // Y is written once only on its tiles (passes/rewrites.h): no backward of the forward as it
        // is; the module refuses a launch whose programs do not map onto them.
        Case{"persistent_scale",
             {"def _persistent_scale_bwd_remapped(", "tiles=(0, lambda p: (p[0], ",
              "launches = _with_grid(launches, 0, box)", "    if not (box is not None):\n        raise RuntimeError("},
             {"def _persistent_scale_bwd("}},
        // The same with a second tile counter one step behind the loop's variable (Triton's
        // persistent matmul tutorial's epilogue counter).
        Case{"persistent_counter",
             {"def _persistent_scale_bwd_remapped(", "tiles=(0, lambda p: (p[0], ",
              "launches = _with_grid(launches, 0, box)"},
             {}},
        Case{"extra_programs",
             {"def _colmajor_square_bwd_remapped(", "box = _program_box(launches[0].grid", "def _colmajor_square_bwd("},
             {}}),
    [](const auto &info) { return std::string(info.param.file); });

TEST(RemapCpu, OffKeepsTheOriginalSchedule) {
    REQUIRE_TORCH();
    ScopedEnv off("TAD_REMAP", "off");
    const std::string src = generate_and_verify("tests/pipeline/data/remap/grouped_matmul.py", "off", 2);
    EXPECT_EQ(count(src, "_program_box(launches"), 0) << src;
    EXPECT_EQ(count(src, "_remapped"), 0) << src;
}

// The grouped order's map: one to one onto the tiles' box whatever the last group's size; a launch
// with one program too many is not; the split map (group, row in group, column) is one to one only
// where the groups are full.
TEST(ProgramMap, GroupedTilesCoverTheirBoxOnce) {
    std::ifstream in(std::string(TAD_SOURCE_DIR) + "/tests/passes/remap_programs/grouped_tiles.ir");
    std::stringstream text;
    text << in.rdbuf();
    std::string why;
    const std::vector<tad::passes::Remapped> r = tad::passes::remap_programs(tad::ir::parse(text.str()), &why);
    ASSERT_EQ(r.size(), 2u) << why;
    auto box = [&](size_t which, int64_t m, int64_t n, int64_t programs) {
        auto lookup = [&](const std::string &name, int64_t *out) {
            if (name == "M" || name == "N") return *out = name == "M" ? m : n, true;
            if (name == "BLOCK_M" || name == "BLOCK_N") return *out = 16, true;
            return name == "GROUP_M" && (*out = 4, true);
        };
        return r[which].map.box({programs, 1, 1}, lookup);
    };
    // 80 x 40: 5 row tiles (groups of 4 and 1), 3 column tiles.
    EXPECT_EQ(box(0, 80, 40, 15), (std::vector<int64_t>{5, 3}));
    EXPECT_EQ(box(0, 64, 40, 12), (std::vector<int64_t>{4, 3}));
    EXPECT_FALSE(box(0, 80, 40, 16));
    EXPECT_FALSE(box(1, 80, 40, 15));
    EXPECT_EQ(box(1, 64, 40, 12), (std::vector<int64_t>{1, 4, 3}));
}

// A persistent loop's (program, iteration) pairs: 3 programs with stride 3 cover the 5 x 3 tiles
// once; 40 programs the 3 x 4 tiles (most run no iteration); a stride below the programs runs
// tiles twice.
TEST(ProgramMap, PersistentTilesCoverTheirBoxOnce) {
    std::ifstream in(std::string(TAD_SOURCE_DIR) + "/tests/passes/remap_programs/persistent_tiles.ir");
    std::stringstream text;
    text << in.rdbuf();
    std::string why;
    const std::vector<tad::passes::Remapped> r = tad::passes::remap_programs(tad::ir::parse(text.str()), &why);
    ASSERT_EQ(r.size(), 1u) << why;
    ASSERT_TRUE(r[0].map.tiles);
    auto box = [&](int64_t m, int64_t n, int64_t programs, int64_t stride) {
        auto lookup = [&](const std::string &name, int64_t *out) {
            if (name == "M" || name == "N") return *out = name == "M" ? m : n, true;
            if (name == "BLOCK_M" || name == "BLOCK_N") return *out = name == "BLOCK_M" ? 4 : 8, true;
            return name == "P" && (*out = stride, true);
        };
        return r[0].map.box({programs, 1, 1}, lookup);
    };
    EXPECT_EQ(box(19, 21, 3, 3), (std::vector<int64_t>{5, 3}));
    EXPECT_EQ(box(9, 30, 40, 40), (std::vector<int64_t>{3, 4}));
    EXPECT_FALSE(box(19, 21, 3, 2));
}

}  // namespace

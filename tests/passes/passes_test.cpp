// The pass tests: every tests/passes/<pass>/*.ir file is one test. Its `// RUN:` line names the
// passes (pass_runner.h), the function in it is their input, and its `// CHECK` lines
// (filecheck.h) must match the output.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../common/ir_files.h"
#include "filecheck.h"
#include "pass_runner.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = fs::path(TAD_SOURCE_DIR) / "tests" / "passes";

class PassFile : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(PassFile, OutputMatchesChecks) {
    const std::string text = tad::testing::read_text(kRoot / GetParam());
    const std::string pipeline = tad::testing::run_line(text);
    ASSERT_FALSE(pipeline.empty()) << GetParam() << " has no // RUN: line";
    const std::vector<tad::testing::Check> checks = tad::testing::parse_checks(text);
    ASSERT_FALSE(checks.empty()) << GetParam() << " has no // CHECK lines";
    tad::ir::Function f = tad::ir::parse(text);
    f.source_path = GetParam();
    const std::string output = tad::testing::run_passes(pipeline, f);
    EXPECT_EQ(tad::testing::run_checks(checks, output), "") << GetParam() << ": RUN: " << pipeline << "\noutput:\n"
                                                            << output;
}

INSTANTIATE_TEST_SUITE_P(Files, PassFile, ::testing::ValuesIn(tad::testing::ir_files(kRoot)),
                         [](const auto &info) { return tad::testing::ir_test_name(info.param); });

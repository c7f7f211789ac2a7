// The pass tests: every tests/passes/<pass>/*.ir file is one test. Its `// RUN:` line names the
// passes (pass_runner.h), the function in it is their input, and its `// CHECK` lines
// (filecheck.h) must match the output.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "filecheck.h"
#include "pass_runner.h"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = fs::path(TAD_SOURCE_DIR) / "tests" / "passes";

std::vector<std::string> test_files() {
    std::vector<std::string> files;
    for (const auto &e : fs::recursive_directory_iterator(kRoot))
        if (e.is_regular_file() && e.path().extension() == ".ir")
            files.push_back(fs::relative(e.path(), kRoot).generic_string());
    std::sort(files.begin(), files.end());
    return files;
}

std::string read(const fs::path &p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// "cse/merges_adds.ir" -> "cse_merges_adds"
std::string test_name(const std::string &file) {
    std::string n = file.substr(0, file.size() - 3);
    std::replace_if(
        n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
    return n;
}

class PassFile : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(PassFile, OutputMatchesChecks) {
    const std::string text = read(kRoot / GetParam());
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

INSTANTIATE_TEST_SUITE_P(Files, PassFile, ::testing::ValuesIn(test_files()),
                         [](const auto &info) { return test_name(info.param); });

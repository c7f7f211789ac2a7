// Golden dumps: tests/frontend/golden/<name>.py next to <name>.dump (with locations) and
// <name>.noloc.dump (without). TAD_UPDATE_GOLDEN=1 rewrites the expected files from tad's output.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "frontend/parser.h"
#include "frontend_test_util.h"

namespace fs = std::filesystem;
namespace ft = tad::frontend_test;

namespace {

fs::path golden_dir() { return ft::source_dir() / "tests" / "frontend" / "golden"; }

std::vector<std::string> golden_inputs() {
    std::set<std::string> names;
    for (const auto &entry : fs::directory_iterator(golden_dir()))
        if (entry.path().extension() == ".py") names.insert(entry.path().stem().string());
    return {names.begin(), names.end()};
}

bool updating() {
    const char *v = std::getenv("TAD_UPDATE_GOLDEN");
    return v && std::string(v) == "1";
}

void check(const fs::path &expected_file, const std::string &actual) {
    if (updating()) {
        ft::write_text(expected_file, actual);
        return;
    }
    ASSERT_TRUE(fs::exists(expected_file)) << expected_file << " is missing; run with TAD_UPDATE_GOLDEN=1 to create it";
    EXPECT_EQ(ft::first_difference(ft::read_text(expected_file), actual), "") << expected_file;
}

class Golden : public testing::TestWithParam<std::string> {};

TEST_P(Golden, DumpMatchesExpected) {
    const std::string name = GetParam();
    tad::ast::File file = tad::frontend::parse_file((golden_dir() / (name + ".py")).string());
    check(golden_dir() / (name + ".dump"), tad::ast::dump(*file.module, true));
    check(golden_dir() / (name + ".noloc.dump"), tad::ast::dump(*file.module, false));
}

INSTANTIATE_TEST_SUITE_P(Frontend, Golden, testing::ValuesIn(golden_inputs()),
                         [](const testing::TestParamInfo<std::string> &info) { return ft::test_name(info.param); });

}  // namespace

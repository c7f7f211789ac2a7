// Golden-file comparison for tests: expected outputs live beside the tests under tests/; running
// with TAD_UPDATE_GOLDEN=1 rewrites them from the actual output.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace tad::testing {

inline void expect_golden(const std::string &rel_path, const std::string &actual) {
    std::string path = std::string(TAD_SOURCE_DIR) + "/tests/" + rel_path;
    const char *update = std::getenv("TAD_UPDATE_GOLDEN");
    if (update && std::string(update) == "1") {
        std::ofstream(path, std::ios::binary) << actual;
        return;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in.good()) << "missing golden file " << path << " (run with TAD_UPDATE_GOLDEN=1 to create it)";
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), actual) << "golden file " << path << " differs (TAD_UPDATE_GOLDEN=1 regenerates it)";
}

}  // namespace tad::testing

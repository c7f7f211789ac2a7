// The FileCheck-style test folders (tests/passes, tests/schedule): their .ir files, read whole, and
// a GoogleTest name for each.
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tad::testing {

// The .ir files below `root`, relative to it, sorted.
inline std::vector<std::string> ir_files(const std::filesystem::path &root) {
    std::vector<std::string> files;
    for (const auto &e : std::filesystem::recursive_directory_iterator(root))
        if (e.is_regular_file() && e.path().extension() == ".ir")
            files.push_back(std::filesystem::relative(e.path(), root).generic_string());
    std::sort(files.begin(), files.end());
    return files;
}

inline std::string read_text(const std::filesystem::path &p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// "cse/merges_adds.ir" -> "cse_merges_adds"
inline std::string ir_test_name(const std::string &file) {
    std::string n = file.substr(0, file.size() - 3);
    std::replace_if(
        n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
    return n;
}

}  // namespace tad::testing

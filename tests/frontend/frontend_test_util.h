// Helpers shared by the frontend tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tad::frontend_test {

// The repository root.
inline std::filesystem::path source_dir() { return TAD_SOURCE_DIR; }

std::string read_text(const std::filesystem::path &path);
void write_text(const std::filesystem::path &path, const std::string &text);

// The Python interpreter the tests run: $TAD_TEST_PYTHON, else "python3".
std::string python();

// CPython's dump of `file` via tests/frontend/pyast_dump.py; nullopt when CPython rejects the file.
// Fails the current test when the interpreter cannot be run at all.
std::optional<std::string> cpython_dump(const std::filesystem::path &file);

// True when `python()` runs and is CPython 3.11, the ast tad mirrors; otherwise tests that need it
// skip.
bool python_available();

// "" when equal, else the first differing line of two dumps with a little context.
std::string first_difference(const std::string &expected, const std::string &actual);

// The message of the tad::Error that parsing `source` as "x.py" throws, or "no error". Fails the
// current test when the error is not a TAD_ERR_SYNTAX.
std::string parse_error(const std::string &source);

// A name usable in a GoogleTest parameter name: letters, digits and '_'.
std::string test_name(const std::string &text);

}  // namespace tad::frontend_test

// tad's parser against CPython's: every .py file of the repository (tests/frontend/corpus holds
// files written to cover the grammar) must give the same dump, node locations included, as
// ast.parse via tests/frontend/pyast_dump.py.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "frontend/parser.h"
#include "frontend_test_util.h"
#include "support/error.h"

namespace fs = std::filesystem;
namespace ft = tad::frontend_test;

namespace {

bool skipped_dir(const fs::path &dir) {
    std::string name = dir.filename().string();
    return name.empty() || name[0] == '.' || name.rfind("build", 0) == 0 || name == "__pycache__";
}

// Repository-relative paths of the Python files to compare, corpus first.
std::vector<std::string> python_files() {
    const fs::path root = ft::source_dir();
    std::set<std::string> corpus, others;
    for (const auto &entry : fs::directory_iterator(root / "tests" / "frontend" / "corpus"))
        if (entry.path().extension() == ".py") corpus.insert(fs::relative(entry.path(), root).generic_string());
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
        if (it->is_directory() && skipped_dir(it->path())) {
            it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file() && it->path().extension() == ".py") {
            std::string rel = fs::relative(it->path(), root).generic_string();
            if (!corpus.count(rel)) others.insert(rel);
        }
    }
    std::vector<std::string> files(corpus.begin(), corpus.end());
    files.insert(files.end(), others.begin(), others.end());
    return files;
}

bool in_corpus(const std::string &rel) { return rel.rfind("tests/frontend/corpus/", 0) == 0; }

class PythonFile : public testing::TestWithParam<std::string> {};

TEST_P(PythonFile, DumpMatchesCPython) {
    if (!ft::python_available()) GTEST_SKIP() << ft::python() << " is not CPython 3.11";
    const std::string rel = GetParam();
    const fs::path path = ft::source_dir() / rel;
    std::optional<std::string> expected = ft::cpython_dump(path);
    if (!expected) {
        ASSERT_FALSE(in_corpus(rel)) << "CPython rejects corpus file " << rel;
        GTEST_SKIP() << "CPython 3.11 rejects " << rel;
    }
    std::string actual;
    try {
        actual = tad::ast::dump(*tad::frontend::parse_file(path.string()).module, true);
    } catch (const tad::Error &e) {
        FAIL() << "tad rejects a file CPython accepts: " << e.what();
    }
    EXPECT_EQ(ft::first_difference(*expected, actual), "") << rel;
}

INSTANTIATE_TEST_SUITE_P(Repository, PythonFile, testing::ValuesIn(python_files()),
                         [](const testing::TestParamInfo<std::string> &info) { return ft::test_name(info.param); });

// Inputs a repository file cannot hold reliably: other line endings, a byte-order mark, a Latin-1
// declaration, no final newline, nothing at all.
TEST(Differential, EncodingsAndLineEndings) {
    if (!ft::python_available()) GTEST_SKIP() << ft::python() << " is not CPython 3.11";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"crlf", "x = 1\r\nif x:\r\n    y = '''a\r\nb'''\r\n    z = (1,\r\n         2)\r\n"},
        {"cr", "x = 1\ry = 'a' \\\r'b'\r"},
        {"bom", "\xEF\xBB\xBFx = '\xC3\xA9'\ny = f'{x}\xC3\xA9{x}'\n"},
        {"latin1", "# -*- coding: latin-1 -*-\nx = '\xE9\xFC'  # caf\xE9\ny = f'\xE9{x}'\n"},
        {"utf8_cookie", "#!/usr/bin/env python\n# vim: set fileencoding=utf-8 :\nx = 1\n"},
        {"no_final_newline", "if x:\n    y = (1,\n         2)"},
        {"no_final_newline_comment", "x = 1  # done"},
        {"empty", ""},
        {"only_comments", "# one\n\n   # two\n"},
        {"blank_lines", "\n\n   \n\t\n"},
        {"continuation_in_block", "if x:\n    y = 1 + \\\n  2\nz = 3\n"},
        {"dedent_to_eof", "def f():\n    if x:\n        return 1"},
        {"form_feed_indent", "if x:\n\f    y = 1\n    z = 2\n"},
        {"tabs_then_spaces", "if x:\n\ta = 1\n\tif a:\n\t        b = 2\n"},
        {"deep_brackets", std::string(150, '(') + "x" + std::string(150, ')') + "\n"},
    };
    fs::path dir = fs::temp_directory_path() / ("tad_frontend_diff_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    for (const auto &[name, text] : cases) {
        fs::path path = dir / (name + ".py");
        ft::write_text(path, text);
        std::optional<std::string> expected = ft::cpython_dump(path);
        ASSERT_TRUE(expected) << "CPython rejects case " << name;
        std::string actual;
        try {
            actual = tad::ast::dump(*tad::frontend::parse_file(path.string()).module, true);
        } catch (const tad::Error &e) {
            ADD_FAILURE() << name << ": " << e.what();
            continue;
        }
        EXPECT_EQ(ft::first_difference(*expected, actual), "") << name;
    }
    fs::remove_all(dir);
}

}  // namespace

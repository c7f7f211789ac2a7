#include "frontend_test_util.h"

#include <sys/wait.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "frontend/parser.h"
#include "support/error.h"

namespace tad::frontend_test {

namespace fs = std::filesystem;

std::string read_text(const fs::path &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

void write_text(const fs::path &path, const std::string &text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

std::string python() {
    const char *p = std::getenv("TAD_TEST_PYTHON");
    return p && *p ? p : "python3";
}

namespace {

std::string shell_quote(const std::string &s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// Runs `command`; its exit status and standard output.
std::pair<int, std::string> run(const std::string &command) {
    std::FILE *pipe = popen(command.c_str(), "r");
    if (!pipe) return {-1, ""};
    std::string out;
    char buf[65536];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace

bool python_available() {
    static const bool available =
        run(shell_quote(python()) + " -c 'import ast, sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null")
            .first == 0;
    return available;
}

std::optional<std::string> cpython_dump(const fs::path &file) {
    fs::path script = source_dir() / "tests" / "frontend" / "pyast_dump.py";
    auto [status, out] = run(shell_quote(python()) + " -W ignore " + shell_quote(script.string()) + " " +
                             shell_quote(file.string()) + " 2>/dev/null");
    if (status == 2) return std::nullopt;
    EXPECT_EQ(status, 0) << "running pyast_dump.py on " << file;
    return out;
}

std::string first_difference(const std::string &expected, const std::string &actual) {
    if (expected == actual) return "";
    std::vector<std::string> a, b;
    std::istringstream ea(expected), eb(actual);
    for (std::string line; std::getline(ea, line);) a.push_back(line);
    for (std::string line; std::getline(eb, line);) b.push_back(line);
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    std::ostringstream out;
    out << "first difference at dump line " << i + 1 << "\n";
    for (size_t k = i >= 4 ? i - 4 : 0; k < i; ++k) out << "    " << a[k] << "\n";
    out << "  expected: " << (i < a.size() ? a[i] : "<end of dump>") << "\n";
    out << "  actual:   " << (i < b.size() ? b[i] : "<end of dump>") << "\n";
    return out.str();
}

std::string parse_error(const std::string &source) {
    try {
        frontend::parse_source("x.py", source);
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_SYNTAX) << e.what();
        return e.what();
    }
    return "no error";
}

std::string test_name(const std::string &text) {
    std::string out;
    for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return out;
}

}  // namespace tad::frontend_test

// The shared library exports the C ABI and nothing else: C++ symbols leaking out would tie bindings
// to one compiler's ABI and clash with other copies of the same code in the host process.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>

TEST(Exports, OnlyTadSymbols) {
    std::string cmd = std::string("nm -D --defined-only '") + TAD_BINARY_DIR + "/libtad.so'";
    FILE *p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::set<std::string> names;
    char line[4096];
    while (std::fgets(line, sizeof line, p)) {
        std::string l = line;
        std::string name = l.substr(l.find_last_of(' ') + 1);
        name.erase(name.find_last_not_of("\n") + 1);
        names.insert(name);
    }
    ASSERT_EQ(pclose(p), 0) << cmd;
    EXPECT_EQ(names.count("tad_verify"), 1u);
    EXPECT_EQ(names.count("tad_report_number"), 1u);
    for (const std::string &n : names) EXPECT_EQ(n.rfind("tad_", 0), 0u) << "exported: " << n;
}

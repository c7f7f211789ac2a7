#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "support/fs.h"
#include "support/py_literal.h"

using tad::py_literal;
using tad::PyQuotes;

TEST(PyLiteral, QuotesAsReprDoes) {
    EXPECT_EQ(py_literal("gelu"), "'gelu'");
    EXPECT_EQ(py_literal(""), "''");
    EXPECT_EQ(py_literal("it's"), "\"it's\"");
    EXPECT_EQ(py_literal("say \"hi\""), "'say \"hi\"'");
    EXPECT_EQ(py_literal("it's \"x\""), "'it\\'s \"x\"'");
}

// Names in the module are written in double quotes, swapped the same way.
TEST(PyLiteral, DoubleQuotesTheOtherWayRound) {
    EXPECT_EQ(py_literal("DX", PyQuotes::Double), "\"DX\"");
    EXPECT_EQ(py_literal("say \"hi\"", PyQuotes::Double), "'say \"hi\"'");
    EXPECT_EQ(py_literal("it's \"x\"", PyQuotes::Double), "\"it's \\\"x\\\"\"");
}

TEST(PyLiteral, EscapesWhatWouldEndTheLineOrTheLiteral) {
    EXPECT_EQ(py_literal("a\nb\rc\td"), "'a\\nb\\rc\\td'");
    EXPECT_EQ(py_literal("back\\slash"), "'back\\\\slash'");
    EXPECT_EQ(py_literal(std::string("nul\0esc\x1b del\x7f", 13)), "'nul\\x00esc\\x1b del\\x7f'");
}

TEST(PyLiteral, KeepsUnicodeButEscapesControlsAndLineSeparators) {
    EXPECT_EQ(py_literal("caf\xc3\xa9 \xe2\x88\x87"), "'caf\xc3\xa9 \xe2\x88\x87'");  // café ∇
    EXPECT_EQ(py_literal("c1 \xc2\x85"), "'c1 \\x85'");  // NEL
    EXPECT_EQ(py_literal("ls \xe2\x80\xa8 ps \xe2\x80\xa9"), "'ls \\u2028 ps \\u2029'");
}

// Bytes that are not UTF-8 read as os.fsdecode reads them (surrogateescape).
TEST(PyLiteral, BytesThatAreNotUtf8AreSurrogateEscaped) {
    EXPECT_EQ(py_literal("a\xff"), "'a\\udcff'");
    EXPECT_EQ(py_literal("\xc3"), "'\\udcc3'");  // truncated sequence
    EXPECT_EQ(py_literal("\xc0\xaf"), "'\\udcc0\\udcaf'");  // overlong '/'
    EXPECT_EQ(py_literal("\xed\xa0\x80"), "'\\udced\\udca0\\udc80'");  // an encoded surrogate
}

TEST(PyLiteral, DocstringsEscapeEveryDoubleQuote) {
    EXPECT_EQ(py_literal("Reverse mode of k for A='x\"\"\"y'.", PyQuotes::Docstring),
              "\"\"\"Reverse mode of k for A='x\\\"\\\"\\\"y'.\"\"\"");
    EXPECT_EQ(py_literal("ends with \"", PyQuotes::Docstring), "\"\"\"ends with \\\"\"\"\"");
}

// Python itself reads every literal back as the text it came from (bytes compared in hex).
TEST(PyLiteral, PythonReadsBackTheSameText) {
    if (std::system("python3 -c pass >/dev/null 2>&1") != 0) GTEST_SKIP() << "[SKIP] no python3";
    const std::string hostile[] = {"x'''\"\"\"\\\n\r\t\x01\x7f", "caf\xc3\xa9\xe2\x80\xa8", "\xff\xfe/\xc3", ""};
    std::string check = "import os, sys\ncases = [\n";
    for (const std::string &s : hostile) {
        std::string hex;
        for (unsigned char c : s) {
            char buf[3];
            std::snprintf(buf, sizeof buf, "%02x", c);
            hex += buf;
        }
        for (PyQuotes q : {PyQuotes::Single, PyQuotes::Double, PyQuotes::Docstring})
            check += "    (" + py_literal(s, q) + ", '" + hex + "'),\n";
    }
    check += "]\nbad = [v for v, h in cases if os.fsencode(v).hex() != h]\nsys.exit(1 if bad else 0)\n";
    tad::fs::TempDir dir;
    std::ofstream(dir.path() + "/check.py") << check;
    EXPECT_EQ(std::system(("python3 " + dir.path() + "/check.py").c_str()), 0) << check;
}

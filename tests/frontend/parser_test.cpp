// Parser behaviour that the differential test cannot show: values of literals, soft keywords,
// deep nesting, speed.
#include "frontend/parser.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

#include "support/error.h"

namespace ast = tad::ast;
using tad::frontend::parse_source;

namespace {

ast::NodePtr first_value(const std::string &source) {
    ast::File f = parse_source("t.py", source);
    return f.module->list("body")[0]->node("value");
}

TEST(Parser, IntegerLiteralsBeyondInt64KeepTheirDecimalText) {
    EXPECT_EQ(std::get<int64_t>(*first_value("9223372036854775807\n")->find("value")), INT64_C(9223372036854775807));
    EXPECT_EQ(std::get<ast::BigInt>(*first_value("9223372036854775808\n")->find("value")).digits,
              "9223372036854775808");
    EXPECT_EQ(std::get<ast::BigInt>(*first_value("0xFFFFFFFFFFFFFFFFFFFF\n")->find("value")).digits,
              "1208925819614629174706175");
    EXPECT_EQ(std::get<int64_t>(*first_value("0b1_0_1\n")->find("value")), 5);
}

TEST(Parser, FloatLiteralsOverflowToInfinity) {
    EXPECT_EQ(std::get<double>(*first_value("1e400\n")->find("value")), HUGE_VAL);
    EXPECT_EQ(std::get<double>(*first_value("1e-400\n")->find("value")), 0.0);
    EXPECT_EQ(std::get<double>(*first_value("1_0.2_5\n")->find("value")), 10.25);
}

TEST(Parser, StringEscapesDecodeToUtf8) {
    EXPECT_EQ(first_value("'\\u00e9\\x41\\101\\n'\n")->str("value"),
              "\xC3\xA9"
              "AA\n");
    EXPECT_EQ(std::get<ast::Bytes>(*first_value("b'\\xff\\101'\n")->find("value")).data,
              "\xff"
              "A");
    EXPECT_EQ(first_value("r'\\n' '\\q'\n")->str("value"), "\\n\\q");
}

TEST(Parser, SoftKeywordsAreNamesOutsideMatch) {
    ast::File f = parse_source("t.py", "match = case = _ = 1\nmatch(x)\nmatch[0]: int\n");
    const ast::NodeList &body = f.module->list("body");
    EXPECT_TRUE(body[0]->is("Assign"));
    EXPECT_TRUE(body[1]->is("Expr"));
    EXPECT_TRUE(body[2]->is("AnnAssign"));
    EXPECT_TRUE(parse_source("t.py", "match x:\n    case 1: pass\n").module->list("body")[0]->is("Match"));
}

std::string repeat(const std::string &s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
}

// The deepest inputs CPython 3.11 accepts parse, within a small stack at -O0.
TEST(Parser, DeepNestingUpToCPythonsLimits) {
    EXPECT_NO_THROW(parse_source("t.py", "x = " + repeat("[", 199) + repeat("]", 199) + "\n"));
    EXPECT_NO_THROW(parse_source("t.py", "x = " + repeat("f(", 199) + repeat(")", 199) + "\n"));
    EXPECT_NO_THROW(parse_source("t.py", "x = " + std::string(2990, '-') + "1\n"));
    EXPECT_NO_THROW(parse_source("t.py", "x = " + repeat("lambda: ", 2980) + "1\n"));
    EXPECT_NO_THROW(parse_source("t.py", "x = " + repeat("2 ** ", 2980) + "1\n"));
    EXPECT_NO_THROW(parse_source("t.py", "x = " + repeat("a if b else ", 2980) + "1\n"));
    ast::File chain = parse_source("t.py", "x = a" + repeat(" + a", 2991) + "\n");
    EXPECT_EQ(chain.module->list("body")[0]->node("value")->kind, "BinOp");
    EXPECT_NO_THROW(parse_source("t.py", "x = " + repeat("not ", 2991) + "a\n"));
}

// A syntax error at the end of a very long chain unwinds a partial tree far taller than any
// recursion could handle; nodes are released without recursion.
TEST(Parser, TallPartialTreesAreReleasedSafely) {
    try {
        parse_source("t.py", "x = a" + repeat(" + a", 100000) + " +\n");
        ADD_FAILURE() << "no error";
    } catch (const tad::Error &e) {
        EXPECT_EQ(std::string(e.what()), "t.py:1:400008: syntax error: invalid syntax");
    }
}

TEST(Parser, FiveThousandLinesInWellUnderASecond) {
    std::string source;
    for (int i = 0; i < 1000; ++i) {
        std::string n = std::to_string(i);
        source += "@triton.jit\ndef kernel_" + n + "(X, Y, N, BLOCK: tl.constexpr):\n" +
                  "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n" +
                  "    x = tl.load(X + offs[:, None], mask=offs[:, None] < N, other=0.0)\n" +
                  "    tl.store(Y + offs, x * " + n + ".5, mask=offs < N)  # f\"{n}\"\n";
    }
    auto start = std::chrono::steady_clock::now();
    ast::File f = parse_source("big.py", source);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(f.module->list("body").size(), 1000u);
#if defined(__SANITIZE_ADDRESS__)
    const double budget = 5.0;  // instrumented code runs several times slower
#else
    const double budget = 1.0;
#endif
    EXPECT_LT(seconds, budget);
}

}  // namespace

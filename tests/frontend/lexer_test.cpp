#include "frontend/lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/error.h"

using tad::frontend::Lexer;
using tad::frontend::Origin;
using tad::frontend::Tok;
using tad::frontend::Token;

namespace {

std::vector<Token> tokens(const std::string &text, Origin origin = {"x.py", 1, 0, ""}) {
    Lexer lexer(text, origin);
    std::vector<Token> out;
    for (;;) {
        out.push_back(lexer.next());
        if (out.back().kind == Tok::End) return out;
    }
}

// One line per token: kind, text and span, e.g. "Name x 1:0-1:1".
std::string describe(const std::vector<Token> &toks) {
    static const char *const kinds[] = {"Name", "Number", "String", "Op", "Newline", "Indent", "Dedent", "End"};
    std::string out;
    for (const Token &t : toks) {
        out += kinds[static_cast<int>(t.kind)];
        if (!t.text.empty()) out += " " + t.text;
        out += " " + std::to_string(t.line) + ":" + std::to_string(t.col) + "-" + std::to_string(t.end_line) + ":" +
               std::to_string(t.end_col) + "\n";
    }
    return out;
}

TEST(Lexer, IndentDedentAndNewlines) {
    EXPECT_EQ(describe(tokens("if x:\n    y\n\n  # c\nz\n")),
              "Name if 1:0-1:2\n"
              "Name x 1:3-1:4\n"
              "Op : 1:4-1:5\n"
              "Newline 1:5-1:6\n"
              "Indent 2:4-2:4\n"
              "Name y 2:4-2:5\n"
              "Newline 2:5-2:6\n"
              "Dedent 5:0-5:0\n"
              "Name z 5:0-5:1\n"
              "Newline 5:1-5:2\n"
              "End 6:0-6:0\n");
}

TEST(Lexer, DedentsAtEndOfInputWithoutNewline) {
    EXPECT_EQ(describe(tokens("if a:\n  if b:\n    c")),
              "Name if 1:0-1:2\nName a 1:3-1:4\nOp : 1:4-1:5\nNewline 1:5-1:6\n"
              "Indent 2:2-2:2\nName if 2:2-2:4\nName b 2:5-2:6\nOp : 2:6-2:7\nNewline 2:7-2:8\n"
              "Indent 3:4-3:4\nName c 3:4-3:5\nNewline 3:5-3:5\n"
              "Dedent 3:5-3:5\nDedent 3:5-3:5\nEnd 3:5-3:5\n");
}

TEST(Lexer, ImplicitAndExplicitLineJoining) {
    EXPECT_EQ(describe(tokens("x = (1,\n      2) + \\\n  3\n")),
              "Name x 1:0-1:1\nOp = 1:2-1:3\nOp ( 1:4-1:5\nNumber 1 1:5-1:6\nOp , 1:6-1:7\n"
              "Number 2 2:6-2:7\nOp ) 2:7-2:8\nOp + 2:9-2:10\nNumber 3 3:2-3:3\n"
              "Newline 3:3-3:4\nEnd 4:0-4:0\n");
}

TEST(Lexer, TabIndentation) {
    // A tab advances to the next multiple of eight; columns stay byte offsets.
    std::string kinds;
    std::vector<Token> t = tokens("if x:\n\ty\n\tif y:\n\t\tz\n");
    for (const Token &tok : t) kinds += tok.kind == Tok::Indent ? "I" : tok.kind == Tok::Dedent ? "D" : "";
    EXPECT_EQ(kinds, "IIDD");
    EXPECT_EQ(t[5].text, "y");
    EXPECT_EQ(t[5].col, 1);
}

TEST(Lexer, OperatorsLongestMatch) {
    std::string ops;
    for (const Token &t : tokens("a**=b//=c>>=d<<=e...f->g:=h!=i**j//k<=l>=m==n@=o"))
        if (t.kind == Tok::Op) ops += t.text + " ";
    EXPECT_EQ(ops, "**= //= >>= <<= ... -> := != ** // <= >= == @= ");
}

TEST(Lexer, NumbersKeepTheirText) {
    std::string texts;
    for (const Token &t : tokens("0x_ff 0o17 0b1 1_000 1. .5 1e-3 1.5E+2 2j 1if"))
        if (t.kind == Tok::Number) texts += t.text + " ";
    EXPECT_EQ(texts, "0x_ff 0o17 0b1 1_000 1. .5 1e-3 1.5E+2 2j 1 ");
}

TEST(Lexer, StringsWithPrefixesSpanLines) {
    std::vector<Token> t = tokens("s = rb'\\'' + f\"\"\"a\nb\"\"\" + Fr'x'\n");
    EXPECT_EQ(t[2].kind, Tok::String);
    EXPECT_EQ(t[2].text, "rb'\\''");
    EXPECT_EQ(t[4].text, "f\"\"\"a\nb\"\"\"");
    EXPECT_EQ(t[4].line, 1);
    EXPECT_EQ(t[4].col, 13);
    EXPECT_EQ(t[4].end_line, 2);
    EXPECT_EQ(t[4].end_col, 4);
    EXPECT_EQ(t[6].text, "Fr'x'");
    // Not a prefix: a name followed by a string.
    std::vector<Token> u = tokens("bu'x'\n");
    EXPECT_EQ(u[0].kind, Tok::Name);
    EXPECT_EQ(u[1].kind, Tok::String);
}

TEST(Lexer, KeywordsAreNames) {
    std::vector<Token> t = tokens("match case _ if await\n");
    for (int i = 0; i < 5; ++i) EXPECT_EQ(t[i].kind, Tok::Name);
    EXPECT_TRUE(tad::frontend::is_keyword("await"));
    EXPECT_TRUE(tad::frontend::is_keyword("None"));
    EXPECT_FALSE(tad::frontend::is_keyword("match"));
    EXPECT_FALSE(tad::frontend::is_keyword("print"));
}

TEST(Lexer, UnicodeNamesAndByteColumns) {
    std::vector<Token> t = tokens("\xCF\x80 = \xC3\xA9t\xC3\xA9\n");
    EXPECT_EQ(t[0].text, "\xCF\x80");
    EXPECT_EQ(t[0].end_col, 2);
    EXPECT_EQ(t[2].text, "\xC3\xA9t\xC3\xA9");
    EXPECT_EQ(t[2].col, 5);
    EXPECT_EQ(t[2].end_col, 10);
}

// The positions an f-string expression gets: its first line is `line`, and tokens ending on that
// line are shifted right by `first_line_col`.
TEST(Lexer, OriginShiftsTheFirstLineOnly) {
    std::vector<Token> t = tokens("(a +\n b)", {"x.py", 7, 20, "f-string: "});
    EXPECT_EQ(describe(t),
              "Op ( 7:20-7:21\nName a 7:21-7:22\nOp + 7:23-7:24\nName b 8:1-8:2\nOp ) 8:2-8:3\n"
              "Newline 8:3-8:3\nEnd 8:3-8:3\n");
    try {
        tokens("(a $)", {"x.py", 7, 20, "f-string: "});
        ADD_FAILURE() << "no error";
    } catch (const tad::Error &e) {
        EXPECT_EQ(std::string(e.what()), "x.py:7:24: syntax error: f-string: invalid syntax");
    }
}

TEST(Lexer, EndRepeatsOnceReached) {
    Lexer lexer("", {"x.py", 1, 0, ""});
    EXPECT_EQ(lexer.next().kind, Tok::End);
    EXPECT_EQ(lexer.next().kind, Tok::End);
}

}  // namespace

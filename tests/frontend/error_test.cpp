// Every diagnostic of the lexer and parser, by its exact text and position ("x.py:line:col",
// 1-based column).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "frontend/parser.h"
#include "frontend_test_util.h"
#include "support/error.h"

namespace ft = tad::frontend_test;

namespace {

struct Case {
    std::string source;
    std::string message;
};

void expect_errors(const std::vector<Case> &cases) {
    for (const Case &c : cases) EXPECT_EQ(ft::parse_error(c.source), "x.py:" + c.message) << c.source.substr(0, 200);
}

TEST(SyntaxErrors, Indentation) {
    expect_errors({
        {"if x\n    pass\n", "1:5: syntax error: expected ':'"},
        {"x = 1\n    y = 2\n", "2:5: syntax error: unexpected indent"},
        {"def f(x):\n  return\n    1\n", "3:5: syntax error: unexpected indent"},
        {"if x:\n        a\n    b\n", "3:5: syntax error: unindent does not match any outer indentation level"},
        {"if x:\npass\n", "2:1: syntax error: expected an indented block after 'if' statement on line 1"},
        {"def f():\n\nx = 1\n", "3:1: syntax error: expected an indented block after function definition on line 1"},
        {"class A:\n", "2:1: syntax error: expected an indented block after class definition on line 1"},
        {"for x in y:\n# c\nz\n", "3:1: syntax error: expected an indented block after 'for' statement on line 1"},
        {"try:\n    pass\nexcept E:\nz\n",
         "4:1: syntax error: expected an indented block after 'except' statement on line 3"},
        {"match x:\nx = 1\n", "2:1: syntax error: expected an indented block after 'match' statement on line 1"},
        {"if x:\n\tif y:\n        pass\n", "3:9: syntax error: inconsistent use of tabs and spaces in indentation"},
        {"if x:\n        a = 1\n\tb = 2\n", "3:2: syntax error: inconsistent use of tabs and spaces in indentation"},
    });
}

TEST(SyntaxErrors, Brackets) {
    expect_errors({
        {"x = (1, 2))\n", "1:11: syntax error: unmatched ')'"},
        {"x = (1, 2]\n", "1:10: syntax error: closing parenthesis ']' does not match opening parenthesis '('"},
        {"x = (1,\n  2]\n",
         "2:4: syntax error: closing parenthesis ']' does not match opening parenthesis '(' on "
         "line 1"},
        {"x = (1,\n  2\n", "1:5: syntax error: '(' was never closed"},
        {"x = [1, 2\ny = 3\n", "1:5: syntax error: '[' was never closed"},
        {"with (a as b:\n    pass\n", "1:6: syntax error: '(' was never closed"},
        {"x = (1 2)\n", "1:8: syntax error: invalid syntax. Perhaps you forgot a comma?"},
        {"x = {1: 2 3: 4}\n", "1:11: syntax error: invalid syntax. Perhaps you forgot a comma?"},
        {"x = " + std::string(201, '(') + "\n", "1:205: syntax error: too many nested parentheses"},
    });
}

TEST(SyntaxErrors, Tokens) {
    expect_errors({
        {"s = 'abc\n", "1:5: syntax error: unterminated string literal"},
        {"s = '''abc\n", "1:5: syntax error: unterminated triple-quoted string literal"},
        {"x = $\n", "1:5: syntax error: invalid syntax"},
        {"x = a ! b\n", "1:7: syntax error: invalid syntax"},
        {"x = a \xE2\x80\x9C b\n", "1:7: syntax error: invalid character '\xE2\x80\x9C' (U+201C)"},
        {"x = a\xC2\xA0+ b\n", "1:6: syntax error: invalid non-printable character U+00A0"},
        {"x = 1 \\ 2\n", "1:8: syntax error: unexpected character after line continuation character"},
        {"x = 1 \\", "1:7: syntax error: unexpected EOF while parsing"},
        {std::string("x = 1\0\n", 7), "1:6: syntax error: source code cannot contain null bytes"},
        {"x = '\xFF'\n", "1:6: syntax error: invalid UTF-8 byte 0xff"},
        {"# coding: koi8-r\nx = 1\n",
         "1:1: syntax error: unsupported source encoding 'koi8-r' (tad reads UTF-8 and Latin-1)"},
    });
}

TEST(SyntaxErrors, Numbers) {
    expect_errors({
        {"x = 1abc\n", "1:5: syntax error: invalid decimal literal"},
        {"x = 1_\n", "1:5: syntax error: invalid decimal literal"},
        {"x = 1__0\n", "1:5: syntax error: invalid decimal literal"},
        {"x = 1e+\n", "1:5: syntax error: invalid decimal literal"},
        {"x = 0x\n", "1:5: syntax error: invalid hexadecimal literal"},
        {"x = 0xg\n", "1:5: syntax error: invalid hexadecimal literal"},
        {"x = 0o8\n", "1:7: syntax error: invalid digit '8' in octal literal"},
        {"x = 0b12\n", "1:8: syntax error: invalid digit '2' in binary literal"},
        {"x = 1.5j_\n", "1:5: syntax error: invalid imaginary literal"},
        {"x = 012\n",
         "1:5: syntax error: leading zeros in decimal integer literals are not permitted; "
         "use an 0o prefix for octal integers"},
    });
}

TEST(SyntaxErrors, StringLiterals) {
    expect_errors({
        {"x = b'\xC3\xA9'\n", "1:5: syntax error: bytes can only contain ASCII literal characters"},
        {"x = 'a' b'b'\n", "1:9: syntax error: cannot mix bytes and nonbytes literals"},
        {"x = '\\x4'\n", "1:5: syntax error: (unicode error) truncated \\xXX escape"},
        {"x = '\\u12'\n", "1:5: syntax error: (unicode error) truncated \\uXXXX escape"},
        {"x = '\\U00110000'\n", "1:5: syntax error: (unicode error) illegal Unicode character"},
        {"x = b'ab\\x4'\n", "1:5: syntax error: (value error) invalid \\x escape at position 2"},
        {"x = '\\N{BULLET}'\n", "1:5: syntax error: \\N{...} escapes are not supported"},
    });
}

TEST(SyntaxErrors, FStrings) {
    expect_errors({
        {"x = f'{}'\n", "1:5: syntax error: f-string: empty expression not allowed"},
        {"x = f'{ }'\n", "1:5: syntax error: f-string: empty expression not allowed"},
        {"x = f'{a b}'\n", "1:10: syntax error: f-string: invalid syntax. Perhaps you forgot a comma?"},
        {"x = f'{a $ b}'\n", "1:10: syntax error: f-string: invalid syntax"},
        {"x = 1; y = f'''\n{a +}'''\n", "2:5: syntax error: f-string: invalid syntax"},
        {"x = f'{a!x}'\n", "1:5: syntax error: f-string: invalid conversion character: expected 's', 'r', or 'a'"},
        {"x = f'}'\n", "1:5: syntax error: f-string: single '}' is not allowed"},
        {"x = f'{a'\n", "1:5: syntax error: f-string: expecting '}'"},
        {"x = f'{a!r'\n", "1:5: syntax error: f-string: expecting '}'"},
        {"x = f'{a#}'\n", "1:5: syntax error: f-string expression part cannot include '#'"},
        {"x = f'{\\n}'\n", "1:5: syntax error: f-string expression part cannot include a backslash"},
        {"x = f'{a:{b:{c}}}'\n", "1:5: syntax error: f-string: expressions nested too deeply"},
        {"x = f'{a)}'\n", "1:5: syntax error: f-string: unmatched ')'"},
        {"x = f'{(a]}'\n",
         "1:5: syntax error: f-string: closing parenthesis ']' does not match opening parenthesis "
         "'('"},
        {"x = f'{\"a}'\n", "1:5: syntax error: f-string: unterminated string"},
    });
}

TEST(SyntaxErrors, Statements) {
    expect_errors({
        {"x = = 1\n", "1:5: syntax error: invalid syntax"},
        {"x := 1\n", "1:3: syntax error: invalid syntax"},
        {"else:\n  pass\n", "1:1: syntax error: invalid syntax"},
        {"@dec\nx = 1\n", "2:1: syntax error: invalid syntax"},
        {"async x\n", "1:7: syntax error: invalid syntax"},
        {"class A\n", "1:8: syntax error: expected ':'"},
        {"for x in range(3)\n    pass\n", "1:18: syntax error: expected ':'"},
        {"if x = 1:\n  pass\n", "1:6: syntax error: invalid syntax. Maybe you meant '==' or ':=' instead of '='?"},
        {"print 'hello'\n", "1:1: syntax error: Missing parentheses in call to 'print'. Did you mean print(...)?"},
        {"try:\n    pass\nx = 1\n", "3:1: syntax error: expected 'except' or 'finally' block"},
        {"try:\n    pass\nexcept* :\n    pass\n", "3:9: syntax error: expected one or more exception types"},
        {"try:\n    pass\nexcept A:\n    pass\nexcept* B:\n    pass\n",
         "5:1: syntax error: cannot have both 'except' and 'except*' on the same 'try'"},
        {"try:\n    pass\nexcept A, B:\n    pass\n",
         "3:8: syntax error: multiple exception types must be parenthesized"},
        {"import a.\n", "1:10: syntax error: invalid syntax"},
        {"from x import a,\n", "1:16: syntax error: trailing comma not allowed without surrounding parentheses"},
        {"global 1\n", "1:8: syntax error: invalid syntax"},
        {"x.if\n", "1:3: syntax error: invalid syntax"},
        {"a if b\n", "1:7: syntax error: expected 'else' after 'if' expression"},
    });
}

TEST(SyntaxErrors, Targets) {
    expect_errors({
        {"f() = 1\n",
         "1:1: syntax error: cannot assign to function call here. Maybe you meant '==' instead of "
         "'='?"},
        {"1 = x\n", "1:1: syntax error: cannot assign to literal here. Maybe you meant '==' instead of '='?"},
        {"(a, f()) = x\n", "1:5: syntax error: cannot assign to function call"},
        {"for 1 in x: pass\n", "1:5: syntax error: cannot assign to literal"},
        {"with a as f(): pass\n", "1:11: syntax error: cannot assign to function call"},
        {"[x for x() in y]\n", "1:8: syntax error: cannot assign to function call"},
        {"del f()\n", "1:5: syntax error: cannot delete function call"},
        {"del *a\n", "1:5: syntax error: cannot delete starred"},
        {"del a + b\n", "1:5: syntax error: cannot delete expression"},
        {"x + 1 += 2\n", "1:1: syntax error: 'expression' is an illegal expression for augmented assignment"},
        {"a, b: int\n", "1:1: syntax error: only single target (not tuple) can be annotated"},
        {"[a]: int\n", "1:1: syntax error: only single target (not list) can be annotated"},
        {"f(): int\n", "1:1: syntax error: illegal target for annotation"},
        {"(a.b := 1)\n", "1:2: syntax error: cannot use assignment expressions with attribute"},
        {"(*a)\n", "1:2: syntax error: cannot use starred expression here"},
        {"[*a for a in b]\n", "1:2: syntax error: iterable unpacking cannot be used in comprehension"},
        {"{**a for a in b}\n", "1:2: syntax error: dict unpacking cannot be used in dict comprehension"},
    });
}

TEST(SyntaxErrors, CallsAndParameters) {
    expect_errors({
        {"f(a=1, b)\n", "1:8: syntax error: positional argument follows keyword argument"},
        {"f(**a, b)\n", "1:8: syntax error: positional argument follows keyword argument unpacking"},
        {"f(**a, *b)\n", "1:8: syntax error: iterable argument unpacking follows keyword argument unpacking"},
        {"f(x for x in y, 1)\n", "1:3: syntax error: Generator expression must be parenthesized"},
        {"f(1, x for x in y)\n", "1:6: syntax error: Generator expression must be parenthesized"},
        {"f(a.b=1)\n", "1:3: syntax error: expression cannot contain assignment, perhaps you meant \"==\"?"},
        {"f(True=1)\n", "1:3: syntax error: cannot assign to True"},
        {"def f(a=1, b): pass\n", "1:12: syntax error: non-default argument follows default argument"},
        {"def f(*): pass\n", "1:7: syntax error: named arguments must follow bare *"},
        {"def f(*, **k): pass\n", "1:7: syntax error: named arguments must follow bare *"},
        {"def f(/, a): pass\n", "1:7: syntax error: at least one argument must precede /"},
        {"def f(a, /, b, /): pass\n", "1:16: syntax error: / may appear only once"},
        {"def f(*a, /): pass\n", "1:11: syntax error: / must be ahead of *"},
        {"def f(*a, *b): pass\n", "1:11: syntax error: * argument may appear only once"},
        {"def f(**k, a): pass\n", "1:12: syntax error: arguments cannot follow var-keyword argument"},
        {"def f(*a=1): pass\n", "1:9: syntax error: var-positional argument cannot have default value"},
        {"def f(**k=1): pass\n", "1:10: syntax error: var-keyword argument cannot have default value"},
        {"lambda x: yield\n", "1:11: syntax error: invalid syntax"},
        {"class A(x for x in y): pass\n", "1:11: syntax error: invalid syntax"},
    });
}

TEST(SyntaxErrors, Patterns) {
    expect_errors({
        {"match x:\n    pass\n", "2:5: syntax error: invalid syntax"},
        {"match x:\n    case *a:\n        pass\n", "2:10: syntax error: invalid syntax"},
        {"match x:\n    case a as _:\n        pass\n", "2:15: syntax error: cannot use '_' as a target"},
        {"match x:\n    case C(a=1, b):\n        pass\n",
         "2:17: syntax error: positional patterns follow keyword patterns"},
        {"match x:\n    case 1j + 2j:\n        pass\n", "2:10: syntax error: real number required in complex literal"},
        {"match x:\n    case 1 + 2:\n        pass\n",
         "2:14: syntax error: imaginary number required in complex literal"},
    });
}

std::string repeat(const std::string &s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
}

// `levels` nested if statements, each indented one space more.
std::string nested_ifs(int levels) {
    std::string out;
    for (int i = 0; i < levels; ++i) out += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
    return out + std::string(static_cast<size_t>(levels), ' ') + "pass\n";
}

// Limits that keep recursion over the tree bounded; CPython 3.11 stops at about the same depths.
TEST(SyntaxErrors, NestingLimits) {
    expect_errors({
        {"x = " + repeat("lambda: ", 3000) + "1\n", "1:24005: syntax error: expression nested too deeply"},
        {"x = " + repeat("lambda: ", 2995) + "1\n", "1:23941: syntax error: expression nested too deeply"},
        {"x = a" + repeat(" + a", 2992) + "\n", "1:9: syntax error: expression nested too deeply"},
        {"x = " + repeat("not ", 2992) + "a\n", "1:11973: syntax error: expression nested too deeply"},
        {nested_ifs(100), "101:101: syntax error: too many levels of indentation"},
    });
}

// A parse error is reported after the lexer has read the rest of the file: a lexical error further
// down wins, as in CPython.
TEST(SyntaxErrors, LexicalErrorsLaterInTheFileWin) {
    expect_errors({
        {"x = = 1\ny = 'open\n", "2:5: syntax error: unterminated string literal"},
        {"f() = 1\nz = (\n", "2:5: syntax error: '(' was never closed"},
    });
}

TEST(SyntaxErrors, StatusAndPathOfParseFile) {
    namespace fs = std::filesystem;
    fs::path path = fs::temp_directory_path() / ("tad_frontend_bad_syntax_" + std::to_string(::getpid()) + ".py");
    ft::write_text(path, "x = (\n");
    try {
        tad::frontend::parse_file(path.string());
        ADD_FAILURE() << "no error";
    } catch (const tad::Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_SYNTAX);
        EXPECT_EQ(std::string(e.what()), path.string() + ":1:5: syntax error: '(' was never closed");
    }
    fs::remove(path);
}

TEST(IoErrors, MissingFile) {
    try {
        tad::frontend::parse_file("/nonexistent/dir/kernel.py");
        ADD_FAILURE() << "no error";
    } catch (const tad::Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_IO);
        EXPECT_EQ(std::string(e.what()), "/nonexistent/dir/kernel.py: cannot read file: No such file or directory");
    }
}

TEST(IoErrors, Directory) {
    std::string dir = std::filesystem::temp_directory_path().string();
    try {
        tad::frontend::parse_file(dir);
        ADD_FAILURE() << "no error";
    } catch (const tad::Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_IO);
        EXPECT_EQ(std::string(e.what()), dir + ": cannot read file: a directory, not a regular file");
    }
}

}  // namespace

// Tokenizer for Python 3.11 source, producing the token stream CPython's parser sees: NAME
// (keywords included; the parser tells them apart), NUMBER, STRING (one token per literal, prefix
// and quotes included), OP, NEWLINE, INDENT, DEDENT and END. Comments and blank lines produce
// nothing, and newlines inside brackets or after a backslash are skipped (implicit and explicit
// line joining).
//
// Lines are 1-based, columns are 0-based UTF-8 byte offsets, as in CPython's ast. The input must
// use '\n' line endings (parse_source normalises them).
#pragma once

#include <string>
#include <vector>

namespace tad::frontend {

enum class Tok { Name, Number, String, Op, Newline, Indent, Dedent, End };

struct Token {
    Tok kind = Tok::End;
    std::string text;  // the source text; empty for Newline, Indent, Dedent and End
    int line = 0;
    int col = 0;
    int end_line = 0;
    int end_col = 0;

    bool is_op(const char *op) const { return kind == Tok::Op && text == op; }
    // A NAME token spelling `word` (keywords and soft keywords alike).
    bool is_word(const char *word) const { return kind == Tok::Name && text == word; }
};

// True for the names Python reserves (`if`, `None`, `await`, ...), not the soft keywords.
bool is_keyword(const std::string &name);

// Where the tokenized text sits in its file and how diagnostics about it read. An f-string's
// expression is tokenized on its own, as CPython 3.11 does: its first line is `line`, and tokens
// that end on that first line are shifted right by `first_line_col`.
struct Origin {
    std::string path;
    int line = 1;
    int first_line_col = 0;
    std::string what_prefix;  // prepended to every message, e.g. "f-string: "
};

// Throws tad::Error(TAD_ERR_SYNTAX, "<path>:<line>:<col+1>: syntax error: <prefix><what>").
[[noreturn]] void syntax_error(const Origin &origin, int line, int col, const std::string &what);

class Lexer {
public:
    // `text` must outlive the lexer.
    Lexer(const std::string &text, Origin origin);

    // The next token; End forever once the input is exhausted. Throws on a lexical error.
    Token next();

    const Origin &origin() const { return origin_; }

private:
    struct Bracket {
        char ch;
        int line;
        int col;
    };

    char peek_char(size_t ahead = 0) const;
    int col_at(size_t pos) const { return static_cast<int>(pos - line_start_); }
    void new_line(size_t after_newline);
    [[noreturn]] void fail_at(size_t pos, const std::string &what) const;
    Token make(Tok kind, size_t begin, int line, int col);
    void end_of_input();
    void end_of_line();
    void line_continuation();
    void indentation();
    Token name_or_string();
    Token string(size_t begin, size_t quote_pos, int line, int col);
    Token number();
    void prefixed_integer(char base, size_t begin);
    bool integer_part(size_t begin);
    bool fraction_and_exponent(size_t begin);
    void digits(bool (*is_digit)(char), const char *kind, size_t begin);
    [[noreturn]] void invalid_digit(const char *kind) const;  // the digit at pos_ is not of `kind`
    void end_of_number(const char *kind, size_t begin);
    Token op();

    const std::string &text_;
    Origin origin_;
    size_t pos_ = 0;
    size_t line_start_ = 0;
    int line_ = 1;  // physical line within text_, 1-based
    bool at_line_start_ = true;
    bool line_has_tokens_ = false;
    std::vector<int> indents_{0};
    std::vector<int> alt_indents_{0};  // indentation with tabs counted as one column
    std::vector<Bracket> brackets_;
    std::vector<Token> pending_;  // INDENT, DEDENTs or END queued ahead; the next one is last
};

}  // namespace tad::frontend

#include "frontend/lexer.h"

#include <cstdio>
#include <cstring>

#include "support/error.h"

namespace tad::frontend {

namespace {

constexpr size_t kMaxIndentLevels = 100;  // CPython's MAXINDENT
constexpr size_t kMaxBracketLevels = 200;  // CPython's MAXLEVEL
constexpr int kTabSize = 8;

bool is_dec(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_dec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_oct(char c) { return c >= '0' && c <= '7'; }
bool is_bin(char c) { return c == '0' || c == '1'; }
bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_non_ascii(char c) { return static_cast<unsigned char>(c) >= 0x80; }
bool is_name_start(char c) { return is_ascii_letter(c) || c == '_' || is_non_ascii(c); }
bool is_name_char(char c) { return is_name_start(c) || is_dec(c); }

// Length of the UTF-8 sequence at text[pos] and its code point; 0 when the bytes are not UTF-8.
int decode_utf8(const std::string &text, size_t pos, uint32_t &cp) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(text[pos + k]); };
    unsigned char b = byte(0);
    int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0 || pos + len > text.size()) return 0;
    cp = len == 1 ? b : len == 2 ? (b & 0x1f) : len == 3 ? (b & 0x0f) : (b & 0x07);
    for (int k = 1; k < len; ++k) {
        if ((byte(k) & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (byte(k) & 0x3f);
    }
    static const uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_len[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

// Non-ASCII code points that cannot appear in an identifier: spaces, controls, punctuation and
// symbols. The rest are accepted as identifier characters (CPython checks XID_Start/XID_Continue
// with the full Unicode tables, which tad does not carry).
bool is_non_printable(uint32_t cp) {
    return (cp >= 0x80 && cp <= 0xa0) || cp == 0xad || (cp >= 0x2000 && cp <= 0x200f) ||
           (cp >= 0x2028 && cp <= 0x202f) || (cp >= 0x205f && cp <= 0x206f) || cp == 0x3000 || cp == 0xfeff ||
           (cp >= 0xfff0 && cp <= 0xfffb);
}
bool is_symbol(uint32_t cp) {
    bool latin1_punct = cp >= 0xa1 && cp <= 0xbf && cp != 0xaa && cp != 0xb5 && cp != 0xb7 && cp != 0xba;
    bool general_punct =
        cp >= 0x2010 && cp <= 0x205e && cp != 0x203f && cp != 0x2040 && cp != 0x2054 && !(cp >= 0x2028 && cp <= 0x202f);
    return latin1_punct || cp == 0xd7 || cp == 0xf7 || general_punct || (cp >= 0x20a0 && cp <= 0x20cf) ||
           (cp >= 0x2190 && cp <= 0x2bff) || (cp >= 0x3001 && cp <= 0x3003) || (cp >= 0xe000 && cp <= 0xf8ff) ||
           (cp >= 0x1f000 && cp <= 0x1faff);
}

std::string hex_code(uint32_t cp) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "U+%04X", cp);
    return buf;
}

bool is_string_prefix(const std::string &word) {
    std::string w;
    for (char c : word) w += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    static const char *const prefixes[] = {"r", "u", "b", "f", "br", "rb", "fr", "rf"};
    for (const char *p : prefixes)
        if (w == p) return true;
    return false;
}

}  // namespace

bool is_keyword(const std::string &name) {
    static const char *const keywords[] = {"False",  "None",   "True",    "and",      "as",       "assert", "async",
                                           "await",  "break",  "class",   "continue", "def",      "del",    "elif",
                                           "else",   "except", "finally", "for",      "from",     "global", "if",
                                           "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
                                           "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};
    for (const char *k : keywords)
        if (name == k) return true;
    return false;
}

void syntax_error(const Origin &origin, int line, int col, const std::string &what) {
    throw Error(TAD_ERR_SYNTAX, where(origin.path, line, col + 1) + ": syntax error: " + origin.what_prefix + what);
}

Lexer::Lexer(const std::string &text, Origin origin) : text_(text), origin_(std::move(origin)) {
    // Reject what CPython rejects while decoding the file, before any token is produced.
    int line = 1;
    size_t line_start = 0;
    for (size_t pos = 0; pos < text_.size();) {
        char c = text_[pos];
        if (c == '\n') {
            ++line;
            line_start = ++pos;
            continue;
        }
        int col = static_cast<int>(pos - line_start);
        if (c == '\0') syntax_error(origin_, line, col, "source code cannot contain null bytes");
        uint32_t cp = 0;
        int len = decode_utf8(text_, pos, cp);
        if (len == 0) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "invalid UTF-8 byte 0x%02x", static_cast<unsigned char>(c));
            syntax_error(origin_, line, col, buf);
        }
        pos += static_cast<size_t>(len);
    }
}

char Lexer::peek_char(size_t ahead) const {
    size_t p = pos_ + ahead;
    return p < text_.size() ? text_[p] : '\0';
}

void Lexer::new_line(size_t after_newline) {
    ++line_;
    line_start_ = after_newline;
}

void Lexer::fail_at(size_t pos, const std::string &what) const {
    int shift = line_ == 1 ? origin_.first_line_col : 0;
    syntax_error(origin_, origin_.line + line_ - 1, col_at(pos) + shift, what);
}

Token Lexer::make(Tok kind, size_t begin, int line, int col) {
    // CPython shifts both columns of a token by first_line_col when the token *ends* on the first
    // line of an f-string expression.
    int shift = line_ == 1 ? origin_.first_line_col : 0;
    Token t;
    t.kind = kind;
    if (kind == Tok::Name || kind == Tok::Number || kind == Tok::String || kind == Tok::Op)
        t.text = text_.substr(begin, pos_ - begin);
    t.line = origin_.line + line - 1;
    t.col = col + shift;
    t.end_line = origin_.line + line_ - 1;
    t.end_col = col_at(pos_) + shift;
    return t;
}

Token Lexer::next() {
    for (;;) {
        if (!pending_.empty()) {
            Token t = pending_.back();
            pending_.pop_back();
            return t;
        }
        if (at_line_start_) {
            at_line_start_ = false;
            indentation();
            continue;
        }
        while (peek_char() == ' ' || peek_char() == '\t' || peek_char() == '\f') ++pos_;
        if (pos_ >= text_.size()) {
            end_of_input();
            continue;
        }
        char c = text_[pos_];
        if (c == '#') {
            while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
            continue;
        }
        if (c == '\n') {
            end_of_line();
            continue;
        }
        if (c == '\\') {
            line_continuation();
            continue;
        }
        line_has_tokens_ = true;
        if (is_name_start(c)) return name_or_string();
        if (is_dec(c) || (c == '.' && is_dec(peek_char(1)))) return number();
        if (c == '\'' || c == '"') return string(pos_, pos_, line_, col_at(pos_));
        return op();
    }
}

// Queues what ends the input: NEWLINE if the last line has tokens, a DEDENT per open indentation
// level, and END.
void Lexer::end_of_input() {
    if (!brackets_.empty()) {
        const Bracket &b = brackets_.back();
        syntax_error(origin_, origin_.line + b.line - 1, b.col, std::string("'") + b.ch + "' was never closed");
    }
    const int col = col_at(pos_);
    Token end = make(Tok::End, pos_, line_, col);
    pending_.push_back(end);
    for (; indents_.size() > 1; indents_.pop_back()) {
        Token dedent = end;
        dedent.kind = Tok::Dedent;
        pending_.push_back(dedent);
    }
    if (line_has_tokens_) {
        line_has_tokens_ = false;
        pending_.push_back(make(Tok::Newline, pos_, line_, col));
    }
}

// The '\n' at pos_: a NEWLINE token when it ends a statement (not inside brackets, not after a
// blank or comment-only line).
void Lexer::end_of_line() {
    const size_t begin = pos_++;
    bool ends_statement = brackets_.empty() && line_has_tokens_;
    Token t = make(Tok::Newline, begin, line_, col_at(begin));
    new_line(pos_);
    at_line_start_ = true;
    if (!ends_statement) return;
    line_has_tokens_ = false;
    pending_.push_back(t);
}

// A backslash at pos_ joins its line with the next one; anything but a newline after it is an error.
void Lexer::line_continuation() {
    if (peek_char(1) == '\n') {
        pos_ += 2;
        new_line(pos_);
        if (pos_ >= text_.size()) fail_at(pos_, "unexpected EOF while parsing");
        return;
    }
    if (pos_ + 1 >= text_.size()) fail_at(pos_, "unexpected EOF while parsing");
    fail_at(pos_ + 1, "unexpected character after line continuation character");
}

// Measures the indentation of a new line and queues INDENT or DEDENTs. Blank lines, comment-only
// lines and lines inside brackets do not count.
void Lexer::indentation() {
    int col = 0;
    int alt = 0;
    for (;; ++pos_) {
        char c = peek_char();
        if (c == ' ') {
            ++col;
            ++alt;
        } else if (c == '\t') {
            col = (col / kTabSize + 1) * kTabSize;
            ++alt;
        } else if (c == '\f') {
            col = alt = 0;
        } else {
            break;
        }
    }
    char c = peek_char();
    if (c == '#' || c == '\n' || pos_ >= text_.size() || !brackets_.empty()) return;
    auto tab_error = [&] { fail_at(pos_, "inconsistent use of tabs and spaces in indentation"); };
    Token t = make(Tok::Indent, pos_, line_, col_at(pos_));
    if (col == indents_.back()) {
        if (alt != alt_indents_.back()) tab_error();
    } else if (col > indents_.back()) {
        if (indents_.size() >= kMaxIndentLevels) fail_at(pos_, "too many levels of indentation");
        if (alt <= alt_indents_.back()) tab_error();
        indents_.push_back(col);
        alt_indents_.push_back(alt);
        pending_.push_back(t);
    } else {
        t.kind = Tok::Dedent;
        while (indents_.size() > 1 && col < indents_.back()) {
            indents_.pop_back();
            alt_indents_.pop_back();
            pending_.push_back(t);
        }
        if (col != indents_.back()) fail_at(pos_, "unindent does not match any outer indentation level");
        if (alt != alt_indents_.back()) tab_error();
    }
}

Token Lexer::name_or_string() {
    size_t begin = pos_;
    int line = line_;
    int col = col_at(pos_);
    while (pos_ < text_.size() && is_name_char(text_[pos_])) {
        if (!is_non_ascii(text_[pos_])) {
            ++pos_;
            continue;
        }
        uint32_t cp = 0;
        int len = decode_utf8(text_, pos_, cp);
        if (is_non_printable(cp)) fail_at(pos_, "invalid non-printable character " + hex_code(cp));
        if (is_symbol(cp)) fail_at(pos_, "invalid character '" + text_.substr(pos_, len) + "' (" + hex_code(cp) + ")");
        pos_ += static_cast<size_t>(len);
    }
    char c = peek_char();
    if ((c == '\'' || c == '"') && is_string_prefix(text_.substr(begin, pos_ - begin)))
        return string(begin, pos_, line, col);
    return make(Tok::Name, begin, line, col);
}

// A string literal from its prefix at `begin` and its opening quote at `quote_pos`; escapes are
// decoded by the parser.
Token Lexer::string(size_t begin, size_t quote_pos, int line, int col) {
    char q = text_[quote_pos];
    pos_ = quote_pos;
    bool triple = peek_char(1) == q && peek_char(2) == q;
    pos_ += triple ? 3 : 1;
    auto unterminated = [&] {
        int shift = line == 1 ? origin_.first_line_col : 0;
        syntax_error(origin_, origin_.line + line - 1, col + shift,
                     triple ? "unterminated triple-quoted string literal" : "unterminated string literal");
    };
    for (;;) {
        if (pos_ >= text_.size()) unterminated();
        char c = text_[pos_];
        if (c == '\\' && pos_ + 1 < text_.size()) {
            pos_ += 2;
            if (text_[pos_ - 1] == '\n') new_line(pos_);
            continue;
        }
        if (c == '\n') {
            if (!triple) unterminated();
            new_line(++pos_);
            continue;
        }
        ++pos_;
        if (c != q) continue;
        if (!triple) break;
        if (peek_char() == q && peek_char(1) == q) {
            pos_ += 2;
            break;
        }
    }
    return make(Tok::String, begin, line, col);
}

// Digits of one kind, single underscores allowed between them. Fails when an underscore is not
// followed by a digit. Errors about a number point at its start, `begin`.
void Lexer::digits(bool (*is_digit)(char), const char *kind, size_t begin) {
    for (;;) {
        while (is_digit(peek_char())) ++pos_;
        if (peek_char() != '_') return;
        ++pos_;
        if (is_dec(peek_char()) && !is_digit(peek_char())) invalid_digit(kind);
        if (!is_digit(peek_char())) fail_at(begin, std::string("invalid ") + kind + " literal");
    }
}

void Lexer::invalid_digit(const char *kind) const {
    fail_at(pos_, std::string("invalid digit '") + peek_char() + "' in " + kind + " literal");
}

// A number may be followed directly by a few keywords (`1if x else 2`, deprecated but valid in
// 3.11); any other name character right after it is an error.
void Lexer::end_of_number(const char *kind, size_t begin) {
    static const char *const allowed[] = {"and", "else", "for", "if", "in", "is", "or", "not"};
    for (const char *word : allowed)
        if (text_.compare(pos_, std::strlen(word), word) == 0) return;
    if (is_name_char(peek_char())) fail_at(begin, std::string("invalid ") + kind + " literal");
}

Token Lexer::number() {
    size_t begin = pos_;
    int line = line_;
    int col = col_at(pos_);
    char base = peek_char(1);
    if (peek_char() == '0' && base != '\0' && std::strchr("xXoObB", base)) {
        prefixed_integer(base, begin);
        return make(Tok::Number, begin, line, col);
    }
    bool nonzero_after_leading_zero = peek_char() != '.' && integer_part(begin);
    bool is_float = fraction_and_exponent(begin);
    if (peek_char() == 'j' || peek_char() == 'J') {
        ++pos_;
        end_of_number("imaginary", begin);
    } else {
        if (nonzero_after_leading_zero && !is_float)
            fail_at(begin,
                    "leading zeros in decimal integer literals are not permitted; use an "
                    "0o prefix for octal integers");
        end_of_number("decimal", begin);
    }
    return make(Tok::Number, begin, line, col);
}

// 0x / 0o / 0b (prefix at pos_, the letter `base`) and its digits.
void Lexer::prefixed_integer(char base, size_t begin) {
    pos_ += 2;
    bool (*is_digit)(char) = base == 'x' || base == 'X' ? is_hex : base == 'o' || base == 'O' ? is_oct : is_bin;
    const char *kind = is_digit == is_hex ? "hexadecimal" : is_digit == is_oct ? "octal" : "binary";
    if (peek_char() == '_') ++pos_;
    if (is_dec(peek_char()) && !is_digit(peek_char())) invalid_digit(kind);
    if (!is_digit(peek_char())) fail_at(begin, std::string("invalid ") + kind + " literal");
    digits(is_digit, kind, begin);
    if (is_dec(peek_char())) invalid_digit(kind);
    end_of_number(kind, begin);
}

// The digits before a decimal point; true when they start with 0 and hold another digit (`0123`),
// which only a float may.
bool Lexer::integer_part(size_t begin) {
    bool leading_zero = peek_char() == '0';
    digits(is_dec, "decimal", begin);
    for (size_t p = begin; leading_zero && p < pos_; ++p)
        if (text_[p] != '0' && text_[p] != '_') return true;
    return false;
}

// The optional fraction and exponent; true when either makes the number a float. An 'e' without
// digits after it is not part of the number (it may start `else`).
bool Lexer::fraction_and_exponent(size_t begin) {
    bool is_float = false;
    if (peek_char() == '.') {
        ++pos_;
        is_float = true;
        if (is_dec(peek_char())) digits(is_dec, "decimal", begin);
    }
    if (peek_char() != 'e' && peek_char() != 'E') return is_float;
    size_t e = pos_++;
    if (peek_char() == '+' || peek_char() == '-') {
        ++pos_;
        if (!is_dec(peek_char())) fail_at(begin, "invalid decimal literal");
    }
    if (!is_dec(peek_char())) {
        pos_ = e;
        return is_float;
    }
    digits(is_dec, "decimal", begin);
    return true;
}

Token Lexer::op() {
    size_t begin = pos_;
    int col = col_at(pos_);
    static const char *const three[] = {"**=", "//=", ">>=", "<<=", "..."};
    static const char *const two[] = {"!=", "%=", "&=", "**", "*=", "+=", "-=", "->", "//", "/=",
                                      ":=", "<<", "<=", "==", ">=", ">>", "@=", "^=", "|="};
    for (const char *o : three) {
        if (text_.compare(pos_, 3, o) == 0) {
            pos_ += 3;
            return make(Tok::Op, begin, line_, col);
        }
    }
    for (const char *o : two) {
        if (text_.compare(pos_, 2, o) == 0) {
            pos_ += 2;
            return make(Tok::Op, begin, line_, col);
        }
    }
    char c = text_[pos_];
    if (!std::strchr("%&()*+,-./:;<=>@[]^{|}~", c)) {
        if (!is_non_ascii(c) && (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(c));
            fail_at(pos_, std::string("invalid non-printable character ") + buf);
        }
        fail_at(pos_, "invalid syntax");
    }
    if (c == '(' || c == '[' || c == '{') {
        if (brackets_.size() >= kMaxBracketLevels) fail_at(pos_, "too many nested parentheses");
        brackets_.push_back({c, line_, col});
    } else if (c == ')' || c == ']' || c == '}') {
        if (brackets_.empty()) fail_at(pos_, std::string("unmatched '") + c + "'");
        Bracket open = brackets_.back();
        char want = open.ch == '(' ? ')' : open.ch == '[' ? ']' : '}';
        if (c != want) {
            std::string what =
                std::string("closing parenthesis '") + c + "' does not match opening parenthesis '" + open.ch + "'";
            if (open.line != line_) what += " on line " + std::to_string(origin_.line + open.line - 1);
            fail_at(pos_, what);
        }
        brackets_.pop_back();
    }
    ++pos_;
    return make(Tok::Op, begin, line_, col);
}

}  // namespace tad::frontend

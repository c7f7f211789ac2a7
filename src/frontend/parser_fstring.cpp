// f-strings, following CPython 3.11's Parser/string_parser.c: the literal is scanned for
// replacement fields, and each field's expression is parsed on its own as "(" + text + ")". The
// Constant and FormattedValue parts span all adjacent literals (a format spec's JoinedStr spans
// its own token), while the expressions inside get their real positions where CPython computes
// them, multi-line literals included.
#include <cctype>

#include "frontend/parser_internal.h"

namespace tad::frontend {

namespace {

constexpr size_t kMaxFieldNesting = 200;  // CPython's MAXLEVEL

char closing_bracket(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

// The first '{' or '}' of literal text s[i, end), `end` if none.
size_t next_brace(const std::string &s, size_t i, size_t end, bool raw) {
    while (i < end) {
        char ch = s[i++];
        if (!raw && ch == '\\' && i < end) {
            ch = s[i++];
            if (ch == 'N') {  // skip "\N{NAME}" so its brace does not open a field
                if (i < end && s[i++] == '{')
                    while (i < end && s[i++] != '}') {}
                continue;
            }
        }
        if (ch == '{' || ch == '}') return i - 1;
    }
    return i;
}

}  // namespace

NodePtr string_constant(const std::string &value, const Token &first, const Token &last) {
    Value kind = ast::NoneValue{};
    if (first.text[0] == 'u') kind = std::string("u");
    Loc loc{first.line, first.col, last.end_line, last.end_col};
    return node("Constant", loc, {{"value", value}, {"kind", kind}});
}

void flush_pending(StringParts &parts, const Token &first, const Token &last) {
    if (parts.pending.empty()) return;
    parts.values.push_back(string_constant(parts.pending, first, last));
    parts.pending.clear();
}

NodePtr finish_string(StringParts &parts, const Token &first, const Token &last) {
    if (!parts.fstring) return string_constant(parts.pending, first, last);
    flush_pending(parts, first, last);
    Loc loc{first.line, first.col, last.end_line, last.end_col};
    return node("JoinedStr", loc, {{"values", parts.values}});
}

// The f-string body of token `t` from `pos`: literal text and fields, up to `end` (depth 0) or up
// to the '}' closing a format spec (depth 1).
void Parser::fstring_parts(StringParts &parts, const Token &t, size_t &pos, size_t end, bool raw, int depth,
                           const Token &first, const Token &last) {
    parts.fstring = true;
    for (;;) {
        bool doubled_brace = false;
        parts.pending += fstring_literal(t, pos, end, raw, depth, doubled_brace);
        if (doubled_brace) continue;
        if (pos >= end || t.text[pos] == '}') break;
        std::string debug_text;
        NodePtr field = fstring_field(t, pos, end, raw, depth, first, last, debug_text);
        parts.pending += debug_text;
        flush_pending(parts, first, last);
        parts.values.push_back(field);
    }
    if (depth != 0 && (pos >= end || t.text[pos] != '}')) fail_literal(t, "f-string: expecting '}'");
}

// Literal text up to the next field ('{') or the end; "{{" and "}}" (at depth 0) give one brace
// and set `doubled_brace`.
std::string Parser::fstring_literal(const Token &t, size_t &pos, size_t end, bool raw, int depth, bool &doubled_brace) {
    const std::string &s = t.text;
    const size_t literal_start = pos;
    auto text_to = [&](size_t stop) {
        return raw ? s.substr(literal_start, stop - literal_start) : decode_str(t, literal_start, stop);
    };
    const size_t brace = next_brace(s, pos, end, raw);
    if (brace < end && depth == 0) {
        if (brace + 1 < end && s[brace + 1] == s[brace]) {
            pos = brace + 2;
            doubled_brace = true;
            return text_to(brace + 1);
        }
        if (s[brace] == '}') fail_literal(t, "f-string: single '}' is not allowed");
    }
    pos = brace;
    if (pos == literal_start) return std::string();
    return text_to(pos);
}

// A replacement field at the '{' at `pos`: expression, optional '=', '!conversion' and
// ':format_spec', then '}'. `debug_text` receives the text a '=' field prints before its value.
NodePtr Parser::fstring_field(const Token &t, size_t &pos, size_t end, bool raw, int depth, const Token &first,
                              const Token &last, std::string &debug_text) {
    const std::string &s = t.text;
    if (depth >= 2) fail_literal(t, "f-string: expressions nested too deeply");
    size_t brace = pos++;
    size_t expr_start = pos;
    pos = fstring_expression_end(t, pos, end);
    size_t expr_end = pos;
    auto expect_more = [&] {
        if (pos >= end) fail_literal(t, "f-string: expecting '}'");
    };
    expect_more();
    NodePtr value = fstring_expression(t, brace, expr_start, expr_end);
    if (s[pos] == '=') {
        ++pos;
        while (pos < end && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
        expect_more();
        debug_text = s.substr(expr_start, pos - expr_start);
    }
    int64_t conversion = -1;
    if (s[pos] == '!') {
        ++pos;
        expect_more();
        conversion = static_cast<unsigned char>(s[pos++]);
        if (conversion != 's' && conversion != 'r' && conversion != 'a')
            fail_literal(t, "f-string: invalid conversion character: expected 's', 'r', or 'a'");
    }
    NodePtr spec;
    if (pos < end && s[pos] == ':') {
        ++pos;
        expect_more();
        StringParts spec_parts;
        fstring_parts(spec_parts, t, pos, end, raw, depth + 1, first, last);
        spec = finish_string(spec_parts, t, t);
    }
    if (pos >= end || s[pos] != '}') fail_literal(t, "f-string: expecting '}'");
    ++pos;
    if (!debug_text.empty() && !spec && conversion == -1) conversion = 'r';
    Loc loc{first.line, first.col, last.end_line, last.end_col};
    return node("FormattedValue", loc, {{"value", value}, {"conversion", conversion}, {"format_spec", opt(spec)}});
}

// Where the expression of a field starting at `pos` ends: at the first '!', ':', '}' or '=' outside
// brackets and strings that is not part of a comparison (!=, ==, <=, >=); `end` if there is none.
size_t Parser::fstring_expression_end(const Token &t, size_t pos, size_t end) {
    const std::string &s = t.text;
    std::string brackets;
    for (; pos < end; ++pos) {
        char ch = s[pos];
        if (ch == '\\') fail_literal(t, "f-string expression part cannot include a backslash");
        if (ch == '\'' || ch == '"') {
            pos = fstring_string_end(t, pos, end);
        } else if (ch == '[' || ch == '{' || ch == '(') {
            if (brackets.size() >= kMaxFieldNesting) fail_literal(t, "f-string: too many nested parenthesis");
            brackets += ch;
        } else if (ch == '#') {
            fail_literal(t, "f-string expression part cannot include '#'");
        } else if (brackets.empty() && (ch == '!' || ch == ':' || ch == '}' || ch == '=' || ch == '>' || ch == '<')) {
            char next = pos + 1 < end ? s[pos + 1] : '\0';
            if (next == '=' && ch != ':' && ch != '}') {  // !=, ==, <=, >=
                ++pos;
                continue;
            }
            if (ch == '>' || ch == '<') continue;
            break;
        } else if (ch == ']' || ch == '}' || ch == ')') {
            fstring_close_bracket(t, ch, brackets);
        }
    }
    if (!brackets.empty()) fail_literal(t, std::string("f-string: unmatched '") + brackets.back() + "'");
    return pos;
}

// Closes the innermost of the `open` brackets of a field expression with `ch`.
void Parser::fstring_close_bracket(const Token &t, char ch, std::string &open) {
    if (open.empty()) fail_literal(t, std::string("f-string: unmatched '") + ch + "'");
    char innermost = open.back();
    open.pop_back();
    if (ch != closing_bracket(innermost))
        fail_literal(t, std::string("f-string: closing parenthesis '") + ch + "' does not match opening parenthesis '" +
                            innermost + "'");
}

// The position of the closing quote (the last of three) of the string literal opening at `pos`
// inside a field expression.
size_t Parser::fstring_string_end(const Token &t, size_t pos, size_t end) {
    const std::string &s = t.text;
    const char quote = s[pos];
    const bool triple = pos + 2 < end && s[pos + 1] == quote && s[pos + 2] == quote;
    if (triple) pos += 2;
    for (++pos; pos < end; ++pos) {
        char ch = s[pos];
        if (ch == '\\') fail_literal(t, "f-string expression part cannot include a backslash");
        if (ch != quote) continue;
        if (!triple) return pos;
        if (pos + 2 < end && s[pos + 1] == ch && s[pos + 2] == ch) return pos + 2;
    }
    fail_literal(t, "f-string: unterminated string");
}

// Parses the field expression s[begin, end) of token `t`, whose '{' is at `brace`, placing its
// tokens where CPython 3.11 does (fstring_find_expr_location).
NodePtr Parser::fstring_expression(const Token &t, size_t brace, size_t begin, size_t end) {
    const std::string &s = t.text;
    size_t k = begin;
    while (k < end && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\f')) ++k;
    if (k == end) fail_literal(t, "f-string: empty expression not allowed");

    bool newline_after_brace = true;
    for (size_t p = brace + 1; p < s.size() && s[p] != '}' && s[p] != '\n'; ++p) {
        if (s[p] != ' ' && s[p] != '\t' && s[p] != '\f') {
            newline_after_brace = false;
            break;
        }
    }
    int cols = 0;
    if (!newline_after_brace) {
        size_t p = brace;
        while (p > 0 && s[p] != '\n') --p;
        cols = static_cast<int>(brace - p) - (s[p] == '\n' ? 1 : 0);
    }
    int lines = 0;
    for (size_t p = 0; p < brace; ++p) lines += s[p] == '\n';

    Origin origin = lexer_.origin();
    origin.line = t.line + lines;
    origin.first_line_col = lines != 0 ? cols : t.col + cols;
    origin.what_prefix = "f-string: ";
    std::string text = "(" + s.substr(begin, end - begin) + ")";
    Parser sub(text, origin);
    sub.depth_ = depth_;  // the sub-parser recurses on the same stack
    return sub.fstring_replacement();
}

}  // namespace tad::frontend

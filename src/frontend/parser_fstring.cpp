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
}

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
    size_t literal_start = pos;
    size_t i = pos;
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
        if (ch != '{' && ch != '}') continue;
        if (depth == 0) {
            if (i < end && s[i] == ch) {
                pos = i + 1;
                doubled_brace = true;
                return raw ? s.substr(literal_start, i - literal_start) : decode_str(t, literal_start, i);
            }
            if (ch == '}') fail_literal(t, "f-string: single '}' is not allowed");
        }
        --i;
        break;
    }
    pos = i;
    if (pos == literal_start) return std::string();
    return raw ? s.substr(literal_start, pos - literal_start) : decode_str(t, literal_start, pos);
}

// A replacement field at the '{' at `pos`: expression, optional '=', '!conversion' and
// ':format_spec', then '}'. `debug_text` receives the text a '=' field prints before its value.
NodePtr Parser::fstring_field(const Token &t, size_t &pos, size_t end, bool raw, int depth, const Token &first,
                              const Token &last, std::string &debug_text) {
    const std::string &s = t.text;
    if (depth >= 2) fail_literal(t, "f-string: expressions nested too deeply");
    size_t brace = pos++;
    size_t expr_start = pos;
    char quote = 0;
    bool triple = false;
    std::string brackets;
    // Find where the expression ends, skipping strings and brackets inside it.
    for (; pos < end; ++pos) {
        char ch = s[pos];
        if (ch == '\\') fail_literal(t, "f-string expression part cannot include a backslash");
        if (quote) {
            if (ch != quote) continue;
            if (!triple) {
                quote = 0;
            } else if (pos + 2 < end && s[pos + 1] == ch && s[pos + 2] == ch) {
                pos += 2;
                quote = 0;
            }
            continue;
        }
        if (ch == '\'' || ch == '"') {
            triple = pos + 2 < end && s[pos + 1] == ch && s[pos + 2] == ch;
            if (triple) pos += 2;
            quote = ch;
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
            if (brackets.empty()) fail_literal(t, std::string("f-string: unmatched '") + ch + "'");
            char open = brackets.back();
            brackets.pop_back();
            if ((open == '(' && ch != ')') || (open == '[' && ch != ']') || (open == '{' && ch != '}'))
                fail_literal(t, std::string("f-string: closing parenthesis '") + ch +
                                    "' does not match opening parenthesis '" + open + "'");
        }
    }
    size_t expr_end = pos;
    if (quote) fail_literal(t, "f-string: unterminated string");
    if (!brackets.empty()) fail_literal(t, std::string("f-string: unmatched '") + brackets.back() + "'");
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

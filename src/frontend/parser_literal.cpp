// Number and string literals: values, escape decoding, and concatenation of adjacent literals.
#include <charconv>
#include <cstdio>
#include <limits>

#include "frontend/parser_internal.h"

namespace tad::frontend {

namespace {

int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// An integer literal's digits in `base` as an int64, or its decimal text when it does not fit.
Value integer(const std::string &digits, int base) {
    // Little-endian limbs of 10^9 keep the conversion exact at any length.
    constexpr uint32_t kLimb = 1000000000;
    std::vector<uint32_t> limbs{0};
    for (char c : digits) {
        uint64_t carry = static_cast<uint64_t>(digit_value(c));
        for (uint32_t &limb : limbs) {
            uint64_t v = static_cast<uint64_t>(limb) * static_cast<uint64_t>(base) + carry;
            limb = static_cast<uint32_t>(v % kLimb);
            carry = v / kLimb;
        }
        for (; carry; carry /= kLimb) limbs.push_back(static_cast<uint32_t>(carry % kLimb));
    }
    std::string text = std::to_string(limbs.back());
    char buf[16];
    for (size_t i = limbs.size() - 1; i-- > 0;) {
        std::snprintf(buf, sizeof buf, "%09u", limbs[i]);
        text += buf;
    }
    static const std::string max = std::to_string(std::numeric_limits<int64_t>::max());
    if (text.size() < max.size() || (text.size() == max.size() && text <= max))
        return static_cast<int64_t>(std::stoll(text));
    return ast::BigInt{text};
}

// A decimal float literal (underscores removed); overflow gives inf and underflow 0, like Python.
double floating(const std::string &text) {
    double value = 0;
    auto res = std::from_chars(text.data(), text.data() + text.size(), value);
    if (res.ec != std::errc::result_out_of_range) return value;
    size_t e = text.find_first_of("eE");
    std::string mantissa = text.substr(0, e);
    long exponent = e == std::string::npos ? 0 : std::stol(text.substr(e + 1));
    size_t point = std::min(mantissa.find('.'), mantissa.size());
    size_t first = mantissa.find_first_of("123456789");
    long magnitude = static_cast<long>(point) - static_cast<long>(first) - (first < point ? 1 : 0);
    return magnitude + exponent > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

// Appends code point `cp` as UTF-8; surrogates get the three-byte form (CPython str may hold them).
void append_utf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

// The escapes common to str and bytes; returns false for any other character after '\'.
bool simple_escape(char e, std::string &out) {
    switch (e) {
    case '\n': return true;  // backslash-newline continues the literal
    case '\\': out += '\\'; return true;
    case '\'': out += '\''; return true;
    case '"': out += '"'; return true;
    case 'a': out += '\a'; return true;
    case 'b': out += '\b'; return true;
    case 'f': out += '\f'; return true;
    case 'n': out += '\n'; return true;
    case 'r': out += '\r'; return true;
    case 't': out += '\t'; return true;
    case 'v': out += '\v'; return true;
    default: return false;
    }
}

// Reads up to 3 octal digits starting with s[i - 1].
uint32_t octal_escape(const std::string &s, size_t &i, size_t end) {
    uint32_t v = static_cast<uint32_t>(s[i - 1] - '0');
    for (int k = 0; k < 2 && i < end && s[i] >= '0' && s[i] <= '7'; ++k) v = v * 8 + (s[i++] - '0');
    return v;
}

// The prefix letters of a string token and where its body lies between the quotes.
struct Literal {
    bool bytes = false;
    bool raw = false;
    bool fstring = false;
    size_t begin = 0;
    size_t end = 0;
};

Literal split_literal(const std::string &text) {
    Literal lit;
    size_t i = 0;
    for (; text[i] != '\'' && text[i] != '"'; ++i) {
        char c = static_cast<char>(text[i] | 0x20);
        lit.bytes |= c == 'b';
        lit.raw |= c == 'r';
        lit.fstring |= c == 'f';
    }
    size_t quotes = text.compare(i, 3, std::string(3, text[i])) == 0 && text.size() - i >= 6 ? 3 : 1;
    lit.begin = i + quotes;
    lit.end = text.size() - quotes;
    return lit;
}

}  // namespace

NodePtr Parser::number() {
    const Token &t = take();
    std::string text;
    for (char c : t.text)
        if (c != '_') text += c;
    Value value;
    char last = text.back();
    char base = text.size() > 1 && text[0] == '0' ? static_cast<char>(text[1] | 0x20) : '\0';
    if (last == 'j' || last == 'J')
        value = ast::Imaginary{floating(text.substr(0, text.size() - 1))};
    else if (base == 'x' || base == 'o' || base == 'b')
        value = integer(text.substr(2), base == 'x' ? 16 : base == 'o' ? 8 : 2);
    else if (text.find_first_of(".eE") != std::string::npos)
        value = floating(text);
    else
        value = integer(text, 10);
    return node("Constant", loc_of(t), {{"value", value}, {"kind", ast::NoneValue{}}});
}

void Parser::fail_literal(const Token &t, const std::string &what) {
    read_to_end();
    Origin origin = lexer_.origin();
    origin.what_prefix.clear();
    syntax_error(origin, t.line, t.col, what);
}

// A str literal's escapes, decoded as CPython does; unknown escapes keep their backslash.
std::string Parser::decode_str(const Token &t, size_t begin, size_t end) {
    const std::string &s = t.text;
    std::string out;
    for (size_t i = begin; i < end;) {
        if (s[i] != '\\') {
            out += s[i++];
            continue;
        }
        if (i + 1 >= end) {  // a lone backslash ending an f-string's literal part
            out += '\\';
            break;
        }
        char e = s[i + 1];
        i += 2;
        if (simple_escape(e, out)) continue;
        if (e >= '0' && e <= '7') {
            append_utf8(out, octal_escape(s, i, end));
            continue;
        }
        if (e == 'x' || e == 'u' || e == 'U') {
            append_utf8(out, hex_escape(t, e, i, end));
            continue;
        }
        if (e == 'N') fail_literal(t, "\\N{...} escapes are not supported");
        out += '\\';
        out += e;
    }
    return out;
}

// The code point of the hex digits of a \x, \u or \U escape (`letter`) at `i`, which moves past them.
uint32_t Parser::hex_escape(const Token &t, char letter, size_t &i, size_t end) {
    const std::string &s = t.text;
    const int width = letter == 'x' ? 2 : letter == 'u' ? 4 : 8;
    uint32_t cp = 0;
    for (int k = 0; k < width; ++k, ++i) {
        if (i >= end || digit_value(s[i]) < 0)
            fail_literal(t, std::string("(unicode error) truncated \\") + letter +
                                std::string(static_cast<size_t>(width), 'X') + " escape");
        cp = cp * 16 + static_cast<uint32_t>(digit_value(s[i]));
    }
    if (cp > 0x10ffff) fail_literal(t, "(unicode error) illegal Unicode character");
    return cp;
}

std::string Parser::decode_bytes(const Token &t, size_t begin, size_t end) {
    const std::string &s = t.text;
    std::string out;
    for (size_t i = begin; i < end;) {
        if (s[i] != '\\' || i + 1 >= end) {
            out += s[i++];
            continue;
        }
        char e = s[i + 1];
        i += 2;
        if (simple_escape(e, out)) continue;
        if (e >= '0' && e <= '7') {
            out += static_cast<char>(octal_escape(s, i, end) & 0xff);
            continue;
        }
        if (e == 'x') {
            if (i + 1 >= end || digit_value(s[i]) < 0 || digit_value(s[i + 1]) < 0)
                fail_literal(t, "(value error) invalid \\x escape at position " + std::to_string(i - 2 - begin));
            out += static_cast<char>(digit_value(s[i]) * 16 + digit_value(s[i + 1]));
            i += 2;
            continue;
        }
        out += '\\';
        out += e;
    }
    return out;
}

// STRING+: adjacent literals concatenate; any f-string among them makes the result a JoinedStr.
NodePtr Parser::strings() {
    std::vector<const Token *> tokens;
    while (peek().kind == Tok::String) tokens.push_back(&take());
    const Token &first = *tokens.front();
    const Token &last = *tokens.back();
    StringParts parts;
    bool bytes_mode = false;
    std::string bytes;
    for (size_t i = 0; i < tokens.size(); ++i) {
        const Token &t = *tokens[i];
        Literal lit = split_literal(t.text);
        if (i > 0 && lit.bytes != bytes_mode) fail(t, "cannot mix bytes and nonbytes literals");
        bytes_mode = lit.bytes;
        if (lit.bytes) {
            for (size_t k = lit.begin; k < lit.end; ++k)
                if (static_cast<unsigned char>(t.text[k]) >= 0x80)
                    fail(t, "bytes can only contain ASCII literal characters");
            bytes += lit.raw ? t.text.substr(lit.begin, lit.end - lit.begin) : decode_bytes(t, lit.begin, lit.end);
        } else if (lit.fstring) {
            size_t pos = lit.begin;
            fstring_parts(parts, t, pos, lit.end, lit.raw, 0, first, last);
        } else {
            parts.pending +=
                lit.raw ? t.text.substr(lit.begin, lit.end - lit.begin) : decode_str(t, lit.begin, lit.end);
        }
    }
    if (bytes_mode) {
        Loc loc{first.line, first.col, last.end_line, last.end_col};
        return node("Constant", loc, {{"value", ast::Bytes{bytes}}, {"kind", ast::NoneValue{}}});
    }
    return finish_string(parts, first, last);
}

}  // namespace tad::frontend

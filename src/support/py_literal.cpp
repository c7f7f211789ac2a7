#include "support/py_literal.h"

#include <cstdint>
#include <cstdio>

namespace tad {

namespace {

// The length of the valid UTF-8 sequence at s[i] and its code point; 0 when it is not one
// (truncated, overlong, a surrogate, above U+10FFFF).
size_t utf8_at(std::string_view s, size_t i, uint32_t &cp) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char c = b(0);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    cp = n == 1 ? c : c & (0x7f >> n);
    for (size_t k = 1; k < n; ++k) {
        if ((b(k) & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (b(k) & 0x3f);
    }
    static const uint32_t min_of[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_of[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

std::string hex_escape(const char *format, uint32_t v) {
    char buf[12];
    std::snprintf(buf, sizeof buf, format, static_cast<unsigned>(v));
    return buf;
}

// One code point (or one stray byte, `cp` 0xdc00 + byte) inside a literal quoted with `quote`.
std::string escaped(uint32_t cp, char quote) {
    switch (cp) {
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: break;
    }
    if (cp == static_cast<uint32_t>(quote)) return std::string("\\") + quote;
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return hex_escape("\\x%02x", cp);
    if (cp == 0x2028 || cp == 0x2029 || (cp >= 0xdc80 && cp <= 0xdcff)) return hex_escape("\\u%04x", cp);
    return "";  // kept as it is
}

}  // namespace

std::string py_literal(std::string_view text, PyQuotes quotes) {
    const bool doc = quotes == PyQuotes::Docstring;
    const char preferred = quotes == PyQuotes::Single ? '\'' : '"', other = preferred == '"' ? '\'' : '"';
    // The other quote only where it saves escapes, as repr() does.
    const bool swap =
        !doc && text.find(preferred) != std::string_view::npos && text.find(other) == std::string_view::npos;
    const char quote = doc ? '"' : swap ? other : preferred;
    const std::string ends = doc ? "\"\"\"" : std::string(1, quote);
    std::string out = ends;
    for (size_t i = 0; i < text.size();) {
        uint32_t cp = 0;
        size_t n = utf8_at(text, i, cp);
        if (n == 0) {  // a stray byte
            out += escaped(0xdc00 + static_cast<unsigned char>(text[i]), quote);
            ++i;
            continue;
        }
        std::string e = escaped(cp, quote);
        out += e.empty() ? std::string(text.substr(i, n)) : e;
        i += n;
    }
    return out + ends;
}

}  // namespace tad

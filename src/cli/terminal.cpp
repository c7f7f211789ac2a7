#include "terminal.h"

#include <cstdio>

namespace tad_cli {

namespace {

// The length of the well-formed UTF-8 sequence of 2 to 4 bytes at text[i], or 0.
size_t utf8_length(const std::string &text, size_t i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > text.size() || c == 0xc0 || c == 0xc1 || c > 0xf4) return 0;
    for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return 0;
    return n;
}

std::string hex(unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    return buf;
}

std::string escaped(const std::string &text, Lines lines) {
    std::string out;
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const bool kept = lines == Lines::Many && (c == '\n' || c == '\t');
        if (c < 0x80) {
            out += (c < 0x20 || c == 0x7f) && !kept ? hex(c) : std::string(1, text[i]);
            ++i;
            continue;
        }
        const size_t n = utf8_length(text, i);
        // U+0080..U+009F, the C1 controls, are 0xc2 0x80..0x9f.
        if (n == 0 || (c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0)) {
            out += n == 0 ? hex(c) : hex(static_cast<unsigned char>(text[i + 1]));
            i += n == 0 ? 1 : 2;
            continue;
        }
        out += text.substr(i, n);
        i += n;
    }
    return out;
}

// Moves `at` back to the start of the UTF-8 character it falls in.
size_t char_start(const std::string &s, size_t at) {
    while (at > 0 && at < s.size() && (static_cast<unsigned char>(s[at]) & 0xc0) == 0x80) --at;
    return at;
}

}  // namespace

std::string printable(const std::string &text, size_t max_bytes, Lines lines) {
    std::string s = escaped(text, lines);
    if (s.size() <= max_bytes) return s;
    const size_t head = char_start(s, max_bytes * 2 / 3), tail = char_start(s, s.size() - max_bytes / 3);
    return s.substr(0, head) + "...[" + std::to_string(tail - head) + " bytes cut]..." + s.substr(tail);
}

}  // namespace tad_cli

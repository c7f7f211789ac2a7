#include "support/base64.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "support/error.h"

namespace tad::base64 {

namespace {

const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int sextet(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

[[noreturn]] void invalid(const std::string &why) { fail(TAD_ERR_INVALID_ARGUMENT, "invalid base64: " + why); }

}  // namespace

std::string encode(const std::string &bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        size_t n = std::min<size_t>(3, bytes.size() - i);
        uint32_t group = 0;
        for (size_t k = 0; k < 3; ++k) group = (group << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
        for (size_t k = 0; k < 4; ++k) out += k <= n ? kAlphabet[(group >> (18 - 6 * k)) & 63] : '=';
    }
    return out;
}

std::string decode(const std::string &text) {
    if (text.size() % 4 != 0) invalid("length " + std::to_string(text.size()) + " is not a multiple of 4");
    size_t pad = 0;
    if (!text.empty() && text.back() == '=') pad = text[text.size() - 2] == '=' ? 2 : 1;
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        bool last = i + 4 == text.size();
        size_t data_chars = last ? 4 - pad : 4;
        uint32_t group = 0;
        for (size_t k = 0; k < 4; ++k) {
            int v = k < data_chars ? sextet(text[i + k]) : 0;
            if (v < 0) invalid("unexpected character at byte " + std::to_string(i + k));
            group = (group << 6) | static_cast<uint32_t>(v);
        }
        for (size_t k = 0; k + 1 < data_chars; ++k) out += static_cast<char>((group >> (16 - 8 * k)) & 0xff);
    }
    return out;
}

std::vector<double> decode_float64(const std::string &text) {
    std::string bytes = decode(text);
    if (bytes.size() % sizeof(double) != 0)
        invalid(std::to_string(bytes.size()) + " bytes are not a whole number of float64 values");
    std::vector<double> out(bytes.size() / sizeof(double));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

}  // namespace tad::base64

// Python identifiers (ASCII subset): constexpr spellings and emitted names must be one to be used bare.
#pragma once

#include <cctype>
#include <string>

namespace tad {

inline bool is_identifier(const std::string &s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

}  // namespace tad

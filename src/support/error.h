// Errors inside the C++ core. Every failure is a tad::Error carrying a tad_status code; the C ABI
// layer (src/capi) catches it and turns it into the status + tad_error_last() message.
#pragma once

#include <stdexcept>
#include <string>

#include "tad.h"

namespace tad {

class Error : public std::runtime_error {
public:
    Error(int status, const std::string &message) : std::runtime_error(message), status_(status) {}
    int status() const { return status_; }

private:
    int status_;
};

// "path:line:col" with a 1-based column, the form every diagnostic starts with.
std::string where(const std::string &path, int line, int col1);

[[noreturn]] void fail(int status, const std::string &message);

}  // namespace tad

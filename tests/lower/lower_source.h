// Shared by the lowering tests: bindings, and lowering kernel `k` from a source body (the triton
// imports are prepended).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/lower.h"
#include "frontend/parser.h"
#include "support/error.h"

namespace tad::test {

inline frontend::ArgBinding arg(frontend::ArgBinding::Kind k, const char *name, int64_t v = 0) {
    frontend::ArgBinding b;
    b.kind = k;
    b.name = name;
    b.ival = v;
    return b;
}

inline ir::Function lower_body(const std::string &body, const std::vector<frontend::ArgBinding> &args) {
    std::string src = "import triton\nimport triton.language as tl\n\n\n" + body;
    return frontend::lower_kernel(frontend::parse_source("k.py", src), "k", args);
}

// The message of the unsupported-construct error lowering `body` raises ("no error" if none).
inline std::string lower_error(const std::string &body, const std::vector<frontend::ArgBinding> &args) {
    try {
        lower_body(body, args);
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_UNSUPPORTED);
        return e.what();
    }
    return "no error";
}

}  // namespace tad::test

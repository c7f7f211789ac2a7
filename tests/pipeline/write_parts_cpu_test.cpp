// Writes in parts (passes/write_parts.h) on the CPU tier: chunked linear attention's backward
// kernels, launched once per part (TAD_WRITE_PARTS=always) instead of whole, still match finite
// differences.
#include <gtest/gtest.h>

#include <string>

#include "../common/scoped_env.h"
#include "cpu_session.h"

namespace {

using tad::test::kernel;
using tad::testing::ScopedEnv;

TEST(WritePartsCpu, ChunkedLinearAttentionInParts) {
    REQUIRE_TORCH();
    ScopedEnv env("TAD_WRITE_PARTS", "always");
    const std::string src = tad::test::generate_and_verify("dataset/chunked_linear_attention.py", "in parts", 2);
    const std::string k = kernel(src, "_chunk_outputs_bwd");
    EXPECT_NE(k.find("TAD_PART: tl.constexpr = 0"), std::string::npos) << k;
    EXPECT_EQ(tad::test::count(k, "if TAD_PART == 0 or TAD_PART == "), 4) << k;
    EXPECT_NE(src.find("parts=4)\n@triton.jit\ndef _chunk_outputs_bwd("), std::string::npos);
}

}  // namespace

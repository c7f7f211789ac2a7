// Poly::parse: spelled expressions of names and integers become the polynomials they denote (a
// tile dim `2 * BLOCK`); anything an executor could not evaluate as the kernel does is refused.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "passes/affine.h"

namespace {

using tad::passes::Poly;

std::string parsed(const std::string &s) {
    const std::optional<Poly> p = Poly::parse(s);
    return p ? p->str() : "<none>";
}

TEST(PolyParse, SumsProductsAndParentheses) {
    EXPECT_EQ(parsed("2 * BLOCK"), "2*BLOCK");
    EXPECT_EQ(parsed("BLOCK*2+1"), "2*BLOCK + 1");
    EXPECT_EQ(parsed("(WIDTH - 1) * N"), "N*WIDTH - N");
    EXPECT_EQ(parsed("-BLOCK + 4"), parsed("4 - BLOCK"));
    EXPECT_EQ(parsed("BLOCK_M * BLOCK_N"), "BLOCK_M*BLOCK_N");
    EXPECT_EQ(parsed("16"), "16");
    EXPECT_EQ(parsed("2 * BLOCK_SIZE_FEATURES_LONG"), "2*BLOCK_SIZE_FEATURES_LONG");  // names of any length
    EXPECT_EQ(parsed("A - B - C"), "A - B - C");
}

// A constexpr's quotient floors in Python; the executors' quotient symbols truncate: with OFF = -3,
// OFF // 2 is -2 in the kernel and would be -1 to the launcher (a review's wrong gradient).
TEST(PolyParse, QuotientsAreNotParsed) {
    for (const char *s : {"BLOCK // 2", "C//G", "17 // 4", "2 * (BLOCK // 2)", "N + OFF // 2"})
        EXPECT_EQ(parsed(s), "<none>") << s;
}

TEST(PolyParse, RefusesWhatItCannotSpell) {
    for (const char *s : {"BLOCK / 2", "BLOCK ** 2", "BLOCK % 4", "(BLOCK + 1) // 2", "BLOCK // (2 * N)", "f(BLOCK)",
                          "x.shape", "1e5", "0x10", "1.5", "3 // 0", "BLOCK +", "(BLOCK", "", "BLOCK BLOCK"})
        EXPECT_EQ(parsed(s), "<none>") << s;
}

}  // namespace

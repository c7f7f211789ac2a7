// Poly::parse: spelled expressions of names and integers become the polynomials they denote (a
// tile dim `2 * BLOCK`, a named constant `BLOCK // 2`); anything an executor could not evaluate
// from the launch's scalars is refused.
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
}

TEST(PolyParse, QuotientsOfANameOrNumberBecomeOneSymbol) {
    EXPECT_EQ(parsed("BLOCK // 2"), "BLOCK//2");
    EXPECT_EQ(parsed("C//G"), "C//G");
    EXPECT_EQ(parsed("17 // 4"), "4");
    EXPECT_EQ(parsed("2 * (BLOCK // 2)"), "2*BLOCK//2");
}

TEST(PolyParse, RefusesWhatItCannotSpell) {
    for (const char *s : {"BLOCK / 2", "BLOCK ** 2", "BLOCK % 4", "(BLOCK + 1) // 2", "BLOCK // (2 * N)", "f(BLOCK)",
                          "x.shape", "1e5", "0x10", "1.5", "3 // 0", "BLOCK +", "(BLOCK", "", "BLOCK BLOCK"})
        EXPECT_EQ(parsed(s), "<none>") << s;
}

}  // namespace

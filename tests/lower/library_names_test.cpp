// Lowering the names and spellings of kernel libraries (src/frontend/lower_globals.cpp): what they
// lower to, and the exact text of each refusal.
#include <gtest/gtest.h>

#include "ir/ir.h"
#include "lower_source.h"
#include "support/json.h"

using tad::frontend::ArgBinding;
using tad::test::arg;
using tad::test::lower_body;
using tad::test::lower_error;

namespace {

const std::vector<ArgBinding> kArgs = {arg(ArgBinding::Tensor, "X"), arg(ArgBinding::Int, "n", 5),
                                       arg(ArgBinding::Int, "B", 8)};

std::string printed(const std::string &body) { return tad::ir::print(lower_body(body, kArgs)); }

// Builtin min / max of a run-time scalar are tl.minimum / tl.maximum; of constants they fold.
TEST(LibraryNames, BuiltinMinMaxOfRunTimeScalars) {
    std::string ir = printed(R"(@triton.jit
def k(X, n, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, B))
    tl.store(X + tl.arange(0, B), x * min(n, 3) + x * max(n, 1, min(B, 4)))
)");
    EXPECT_NE(ir.find("minimum"), std::string::npos) << ir;
    EXPECT_NE(ir.find("maximum"), std::string::npos) << ir;
}

// math constants and functions of numbers fold to one constant.
TEST(LibraryNames, MathOfConstantsFolds) {
    std::string ir = printed(R"(@triton.jit
def k(X, n, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, B))
    tl.store(X + tl.arange(0, B), x * (math.log2(math.e) * math.sqrt(4.0)))
)");
    EXPECT_NE(ir.find("const 2.88539"), std::string::npos) << ir;
}

// Spellings tad accepts though Triton 3.6 refuses them (tests/pipeline/data/library keeps to those
// it compiles): a dtype called as a constructor is a cast, and an annotated global holding a plain
// number is a constexpr.
TEST(LibraryNames, DtypeConstructorAndAnnotatedPlainGlobal) {
    std::string ir = printed(R"(_SCALE: tl.constexpr = 0.5


@triton.jit
def k(X, n, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, B)).to(tl.float16)
    tl.store(X + tl.arange(0, B), tl.float32(x) * _SCALE)
)");
    EXPECT_NE(ir.find("cast"), std::string::npos) << ir;
    EXPECT_NE(ir.find("const 0.5"), std::string::npos) << ir;
}

TEST(LibraryNames, MathFunctionTadDoesNotFoldIsRefused) {
    EXPECT_EQ(lower_error(R"(@triton.jit
def k(X, n, B: tl.constexpr):
    tl.store(X + tl.arange(0, B), tl.load(X + tl.arange(0, B)) * math.gamma(2.5))
)",
                          kArgs),
              "k.py:7:66: unsupported construct 'math.gamma': not one of the math functions tad folds on constants");
}

TEST(LibraryNames, AGlobalReadingItselfIsRefused) {
    EXPECT_EQ(lower_error(R"(LOOP = LOOP


@triton.jit
def k(X, n, B: tl.constexpr):
    tl.store(X + tl.arange(0, B), tl.load(X + tl.arange(0, B)) * LOOP)
)",
                          kArgs),
              "k.py:5:8: unsupported construct 'name 'LOOP'': its module-level value reads itself");
}

TEST(LibraryNames, ADefinitionWithOtherParametersIsRefused) {
    EXPECT_EQ(lower_error(R"(@triton.jit
def fast(x):
    return x


@triton.jit
def definition(x, y):
    return x


TAD_DIFFERENTIATE_AS = {fast: definition}


@triton.jit
def k(X, n, B: tl.constexpr):
    tl.store(X + tl.arange(0, B), fast(tl.load(X + tl.arange(0, B))))
)",
                          kArgs),
              "k.py:20:35: unsupported construct 'TAD_DIFFERENTIATE_AS': 'definition' must take the parameters of "
              "'fast'");
}

TEST(LibraryNames, DerivativesForTooFewParametersAreRefused) {
    EXPECT_EQ(lower_error(R"(@triton.jit
def scaled(x, w):
    return x * w


@triton.jit
def scaled_dx(x, w):
    return w


TAD_DERIVATIVES = {scaled: (scaled_dx,)}


@triton.jit
def k(X, n, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, B))
    tl.store(X + tl.arange(0, B), scaled(x, x))
)",
                          kArgs),
              "k.py:21:35: unsupported construct 'TAD_DERIVATIVES': 'scaled' needs one derivative (or None) per "
              "parameter");
}

// The helper's value, with its gradient through grad_via from the given derivative.
TEST(LibraryNames, DerivativesLowerToGradVia) {
    std::string ir = printed(R"(@triton.jit
def cube(x):
    return x * x * x


@triton.jit
def cube_dx(x):
    return 3.0 * x * x


TAD_DERIVATIVES = {cube: (cube_dx,)}


@triton.jit
def k(X, n, B: tl.constexpr):
    tl.store(X + tl.arange(0, B), cube(tl.load(X + tl.arange(0, B))))
)");
    EXPECT_NE(ir.find("stop_gradient"), std::string::npos) << ir;
    EXPECT_NE(ir.find("grad_via"), std::string::npos) << ir;
}

TEST(LibraryNames, NextPowerOfTwoOfARunTimeValueIsRefused) {
    EXPECT_EQ(lower_error(R"(@triton.jit
def k(X, n, B: tl.constexpr):
    tl.store(X + tl.arange(0, B), tl.load(X + tl.arange(0, B)) * triton.next_power_of_2(n))
)",
                          kArgs),
              "k.py:7:66: unsupported construct 'triton.next_power_of_2': takes a constexpr integer in a kernel");
}

// A dtype passed as an argument binds a dtype (the CPU stand-in and triton spell it differently);
// one tad has no type for is refused naming it.
TEST(LibraryNames, DtypeArguments) {
    tad::Json args = tad::Json::parse(R"([{"name": "A", "kind": "other", "value": "triton.language.fp16"},
        {"name": "B", "kind": "other", "value": "triton.language.float32"}])",
                                      "args");
    std::vector<ArgBinding> b = tad::frontend::launch_bindings("k.py", args, false);
    EXPECT_EQ(b[0].kind, ArgBinding::DType);
    EXPECT_EQ(b[0].dtype, tad::ir::DType::F16);
    EXPECT_EQ(b[1].dtype, tad::ir::DType::F32);
    tad::Json bad =
        tad::Json::parse(R"([{"name": "OUT", "kind": "other", "value": "triton.language.uint32"}])", "args");
    try {
        tad::frontend::launch_bindings("k.py", bad, false);
        ADD_FAILURE() << "expected a refusal";
    } catch (const tad::Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  "k.py: unsupported construct 'dtype triton.language.uint32': 'OUT' is a dtype tad has no type for "
                  "(it has float16, bfloat16, float32, float64, int32, int64 and int1)");
    }
}

}  // namespace

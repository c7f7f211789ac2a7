// Loops: lowered with their carried values, interpreted, and emitted as a Python `for`.
#include <gtest/gtest.h>

#include <cmath>

#include "emit/emit.h"
#include "frontend/lower.h"
#include "frontend/parser.h"
#include "interp/interp.h"
#include "lower_source.h"
#include "passes/passes.h"
#include "support/error.h"

using namespace tad;

namespace {

const char *kRowSumOfSquares = R"(import triton
import triton.language as tl


@triton.jit
def k(X, Y, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(X + row * stride + cols, mask=cols < N, other=0.0)
        acc += x * x
    tl.store(Y + row, tl.sum(acc, axis=0))
)";

using tad::test::arg;

ir::Function row_sum(int64_t n, int64_t block) {
    using K = frontend::ArgBinding;
    ir::Function f = frontend::lower_kernel(frontend::parse_source("k.py", kRowSumOfSquares), "k",
                                            {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "N", n),
                                             arg(K::Int, "stride", n), arg(K::Int, "BLOCK", block)});
    return passes::dce(passes::cse(f));
}

}  // namespace

TEST(Loops, LoweredWithCarriedAccumulator) {
    ir::Function f = row_sum(37, 16);
    EXPECT_EQ(ir::verify(f), "");
    std::vector<ir::Loop> ls = ir::loops(f);
    ASSERT_EQ(ls.size(), 1u);
    ASSERT_EQ(ls[0].args.size(), 1u);
    EXPECT_EQ(f.values[f.ops[ls[0].args[0]].result].name, "acc");
    EXPECT_EQ(f.type(f.ops[ls[0].results[0]].result).str(), "f32[BLOCK]");
}

TEST(Loops, InterpreterRunsEveryIterationIncludingTheMaskedTail) {
    for (int64_t n : {1, 16, 37, 64}) {
        ir::Function f = row_sum(n, 16);
        interp::Memory m;
        std::vector<double> x(static_cast<size_t>(3 * n));
        for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25 * static_cast<double>(i % 7) - 0.5;
        int xb = m.add({"x", ir::DType::F32, x});
        int yb = m.add({"y", ir::DType::F32, std::vector<double>(3, NAN)});
        interp::run(f,
                    {interp::ArgValue::pointer(xb), interp::ArgValue::pointer(yb), interp::ArgValue::integer(n),
                     interp::ArgValue::integer(n)},
                    {3, 1, 1}, m);
        for (int64_t r = 0; r < 3; ++r) {
            double want = 0;
            for (int64_t c = 0; c < n; ++c) want += x[r * n + c] * x[r * n + c];
            EXPECT_DOUBLE_EQ(m.at(yb).data[r], want) << "n=" << n << " row " << r;
        }
    }
}

TEST(Loops, EmittedAsAForWithTheAccumulatorUpdatedInPlace) {
    std::string py = emit::emit_kernel(row_sum(37, 16), "");
    EXPECT_NE(py.find("    acc = tl.full((BLOCK,), 0.0, tl.float32)\n"
                      "    for start in range(0, N, BLOCK):\n"
                      "        cols = start + tl.arange(0, BLOCK)\n"),
              std::string::npos)
        << py;
    EXPECT_NE(py.find("        acc = acc + x * x\n    tl.store(Y + row, tl.sum(acc, axis=0))\n"), std::string::npos)
        << py;
}

TEST(Loops, EmittedLoopReparsesToTheSameComputation) {
    using K = frontend::ArgBinding;
    std::string py = "import triton\nimport triton.language as tl\n\n\n" + emit::emit_kernel(row_sum(37, 16), "");
    ir::Function again = frontend::lower_kernel(frontend::parse_source("emitted.py", py), "k",
                                                {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "N", 37),
                                                 arg(K::Int, "stride", 37), arg(K::Int, "BLOCK", 16)});
    EXPECT_EQ(emit::emit_kernel(passes::dce(passes::cse(again)), ""), emit::emit_kernel(row_sum(37, 16), ""));
}

TEST(Loops, StaticRangeIsUnrolled) {
    const char *src = R"(import triton
import triton.language as tl


@triton.jit
def k(X, B: tl.constexpr):
    offs = tl.arange(0, B)
    x = tl.load(X + offs)
    for i in tl.static_range(3):
        x = x * 2.0
    tl.store(X + offs, x)
)";
    using K = frontend::ArgBinding;
    ir::Function f =
        frontend::lower_kernel(frontend::parse_source("k.py", src), "k", {arg(K::Tensor, "X"), arg(K::Int, "B", 8)});
    EXPECT_TRUE(ir::loops(f).empty());
    int muls = 0;
    for (const ir::Op &op : f.ops) muls += op.kind == ir::OpKind::Mul;
    EXPECT_EQ(muls, 3);
}

TEST(Loops, WhileIsRejected) {
    const char *src = R"(import triton
import triton.language as tl


@triton.jit
def k(X, n):
    i = 0
    while i < n:
        i += 1
)";
    using K = frontend::ArgBinding;
    try {
        frontend::lower_kernel(frontend::parse_source("k.py", src), "k", {arg(K::Tensor, "X"), arg(K::Int, "n", 3)});
        FAIL();
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  "k.py:8:5: unsupported construct 'while loop': loops with a data-dependent trip count "
                  "are not supported yet; use for ... in range(...)");
    }
}

// range with a negative constexpr step visits what Python's range does (Triton lowers it so too):
// counted up in the IR, the loop variable counting down from the start.
TEST(Loops, NegativeConstexprStepVisitsPythonsRange) {
    const char *body = R"(@triton.jit
def k(X, Y, LO, HI, STEP: tl.constexpr):
    h = 0.0
    for i in range(LO, HI, -STEP):
        h = 0.5 * h + tl.load(X + i)
        tl.store(Y + i, h)
)";
    using K = frontend::ArgBinding;
    struct Case {
        int64_t lo, hi, step;
    };
    for (Case c : {Case{9, -1, 1}, Case{10, 1, 3}, Case{10, 0, 3}, Case{3, 5, 2}, Case{4, 4, 1}}) {
        ir::Function f = tad::test::lower_body(body, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "LO", c.lo),
                                                      arg(K::Int, "HI", c.hi), arg(K::Int, "STEP", c.step)});
        EXPECT_EQ(ir::verify(f), "");
        interp::Memory m;
        std::vector<double> x(12);
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i) + 1;
        int xb = m.add({"x", ir::DType::F32, x});
        int yb = m.add({"y", ir::DType::F32, std::vector<double>(12, NAN)});
        interp::run(f,
                    {interp::ArgValue::pointer(xb), interp::ArgValue::pointer(yb), interp::ArgValue::integer(c.lo),
                     interp::ArgValue::integer(c.hi)},
                    {1, 1, 1}, m);
        std::vector<double> want(12, NAN);
        double h = 0;
        for (int64_t i = c.lo; i > c.hi; i -= c.step) want[static_cast<size_t>(i)] = h = 0.5 * h + x[i];
        for (size_t i = 0; i < want.size(); ++i)
            if (std::isnan(want[i]))
                EXPECT_TRUE(std::isnan(m.at(yb).data[i])) << "lo=" << c.lo << " step=" << c.step << " at " << i;
            else
                EXPECT_DOUBLE_EQ(m.at(yb).data[i], want[i]) << "lo=" << c.lo << " step=" << c.step << " at " << i;
    }
}

TEST(Loops, StepOfZeroIsRejected) {
    using K = frontend::ArgBinding;
    EXPECT_EQ(tad::test::lower_error(R"(@triton.jit
def k(X, N):
    for i in range(N, 0, 0):
        tl.store(X + i, 1.0)
)",
                                     {arg(K::Tensor, "X"), arg(K::Int, "N", 3)}),
              "k.py:7:14: unsupported construct 'range with a step of 0'");
}

// `if` on run-time scalars and early `return`: if-converted while lowering (where-merges of the
// names the branches assign, memory ops masked with the branch predicate), run on the interpreter.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/lower.h"
#include "frontend/parser.h"
#include "interp/interp.h"
#include "lower_source.h"
#include "passes/access.h"
#include "passes/passes.h"
#include "support/error.h"

using namespace tad;

namespace {

using K = frontend::ArgBinding;

using tad::test::arg;
using tad::test::lower_error;

ir::Function lower(const std::string &body, const std::vector<frontend::ArgBinding> &args) {
    return tad::test::lower_body(body, args);
}

int count(const ir::Function &f, ir::OpKind k) {
    int n = 0;
    for (const ir::Op &op : f.ops) n += op.kind == k;
    return n;
}

// Runs `f` over `rows` programs with X = x, Y = NaN-filled [rows * B] and the scalar `n`.
std::vector<double> run_rows(const ir::Function &f, const std::vector<double> &x, int64_t rows, int64_t n) {
    interp::Memory m;
    int xb = m.add({"x", ir::DType::F32, x});
    int yb = m.add({"y", ir::DType::F32, std::vector<double>(x.size(), NAN)});
    interp::run(f, {interp::ArgValue::pointer(xb), interp::ArgValue::pointer(yb), interp::ArgValue::integer(n)},
                {rows, 1, 1}, m);
    return m.at(yb).data;
}

const char *kRowChoice = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    row = tl.program_id(0)
    offs = row * B + tl.arange(0, B)
    x = tl.load(X + offs)
    scale = 1.0
    if row < n:
        y = x * 2.0
        scale = 3.0
    else:
        y = x - 1.0
    tl.store(Y + offs, y * scale)
)";

}  // namespace

TEST(DynamicIf, BranchesAreMergedWithWhere) {
    ir::Function f =
        lower(kRowChoice, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n", 1), arg(K::Int, "B", 4)});
    EXPECT_EQ(ir::verify(f), "");
    EXPECT_EQ(count(f, ir::OpKind::Where), 2) << ir::print(f);  // y, scale
    std::string text = ir::print(f);
    EXPECT_NE(text.find(": f32[B=4]  // y"), std::string::npos) << text;
    EXPECT_NE(text.find(": f32  // scale"), std::string::npos) << text;
    std::vector<double> x(12);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5 * static_cast<double>(i);
    std::vector<double> y = run_rows(f, x, 3, 1);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_DOUBLE_EQ(y[i], i < 4 ? x[i] * 6.0 : x[i] - 1.0) << i;
}

TEST(DynamicIf, NonBooleanScalarConditionComparesWithZero) {
    const char *src = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    flag = tl.load(X)
    y = tl.load(X + offs)
    if flag:
        y = -y
    tl.store(Y + offs, y)
)";
    ir::Function f = lower(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n"), arg(K::Int, "B", 4)});
    EXPECT_NE(ir::print(f).find("= ne %"), std::string::npos) << ir::print(f);
    EXPECT_EQ(run_rows(f, {0.0, 1.0, 2.0, 3.0}, 1, 0), (std::vector<double>{0.0, 1.0, 2.0, 3.0}));
    EXPECT_EQ(run_rows(f, {0.5, 1.0, 2.0, 3.0}, 1, 0), (std::vector<double>{-0.5, -1.0, -2.0, -3.0}));
}

// Loads and stores in a branch only touch memory when it is taken: the rows past n are never read
// (X is only n rows long, the interpreter faults on out-of-bounds access) nor written.
TEST(DynamicIf, PredicateMasksLoadsAndStores) {
    const char *src = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, B)
    if row < n:
        x = tl.load(X + row * B + cols, mask=cols < 3)
        tl.store(Y + row * B + cols, x + 1.0, mask=cols < 3)
    else:
        tl.store(Y + row * B + cols, 0.0)
)";
    ir::Function f = lower(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n", 2), arg(K::Int, "B", 4)});
    EXPECT_EQ(ir::verify(f), "");
    for (const ir::Op &op : f.ops) {
        if (op.kind == ir::OpKind::Load || op.kind == ir::OpKind::Store) {
            EXPECT_TRUE(op.has_mask) << ir::print(f);
        }
    }
    interp::Memory m;
    int xb = m.add({"x", ir::DType::F32, {1, 2, 3, 4, 5, 6, 7, 8}});
    int yb = m.add({"y", ir::DType::F32, std::vector<double>(16, -9.0)});
    interp::run(f, {interp::ArgValue::pointer(xb), interp::ArgValue::pointer(yb), interp::ArgValue::integer(2)},
                {4, 1, 1}, m);
    EXPECT_EQ(m.at(yb).data, (std::vector<double>{2, 3, 4, -9, 6, 7, 8, -9, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(DynamicIf, BlockPointerAccessesArePredicated) {
    const char *src = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    row = tl.program_id(0)
    xb = tl.make_block_ptr(X, (n, B), (B, 1), (row, 0), (1, B), (1, 0))
    yb = tl.make_block_ptr(Y, (4, B), (B, 1), (row, 0), (1, B), (1, 0))
    if row < n:
        tl.store(yb, tl.load(xb) * 2.0)
)";
    ir::Function f = lower(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n", 2), arg(K::Int, "B", 2)});
    EXPECT_EQ(ir::verify(f), "");
    interp::Memory m;
    int xb = m.add({"x", ir::DType::F32, {1, 2, 3, 4}});
    int yb = m.add({"y", ir::DType::F32, std::vector<double>(8, -9.0)});
    interp::run(f, {interp::ArgValue::pointer(xb), interp::ArgValue::pointer(yb), interp::ArgValue::integer(2)},
                {4, 1, 1}, m);
    EXPECT_EQ(m.at(yb).data, (std::vector<double>{2, 4, 6, 8, -9, -9, -9, -9}));
}

TEST(DynamicIf, EarlyReturnMasksTheRestOfTheKernel) {
    const char *src = R"(@triton.jit
def _put(Y, offs, v, skip):
    if skip:
        return
    tl.store(Y + offs, v)


@triton.jit
def k(X, Y, n, B: tl.constexpr):
    row = tl.program_id(0)
    offs = row * B + tl.arange(0, B)
    if row >= n:
        return
    x = tl.load(X + offs)
    if row == 1:
        tl.store(Y + offs, x * 10.0)
        return
    _put(Y, offs, x + 1.0, row == 2)
)";
    ir::Function f = lower(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n", 3), arg(K::Int, "B", 2)});
    EXPECT_EQ(ir::verify(f), "");
    // X holds 3 rows: row 3's load would fault if the return did not mask it.
    interp::Memory m;
    int xb = m.add({"x", ir::DType::F32, {1, 2, 3, 4, 5, 6}});
    int yb = m.add({"y", ir::DType::F32, std::vector<double>(8, -9.0)});
    interp::run(f, {interp::ArgValue::pointer(xb), interp::ArgValue::pointer(yb), interp::ArgValue::integer(3)},
                {4, 1, 1}, m);
    EXPECT_EQ(m.at(yb).data, (std::vector<double>{2, 3, 30, 40, -9, -9, -9, -9}));
}

TEST(DynamicIf, NestedPartialReturnNarrowsTheRest) {
    const char *src = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    row = tl.program_id(0)
    offs = row * B + tl.arange(0, B)
    y = tl.load(X + offs)
    if row < n:
        if row == 0:
            return
        y = y * 2.0
    tl.store(Y + offs, y)
)";
    ir::Function f = lower(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n", 2), arg(K::Int, "B", 2)});
    EXPECT_EQ(ir::verify(f), "");
    std::vector<double> y = run_rows(f, {1, 2, 3, 4, 5, 6}, 3, 2);
    EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
    EXPECT_EQ(std::vector<double>(y.begin() + 2, y.end()), (std::vector<double>{6, 8, 5, 6}));
}

// A dynamic `if` on the loop index and on a loaded value inside a loop: the carried accumulator is
// merged in the body, so the loop still carries exactly one value.
TEST(DynamicIf, InsideALoopUpdatesTheCarriedValue) {
    const char *src = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    acc = tl.zeros((B,), tl.float32)
    for i in range(0, n):
        x = tl.load(X + i * B + offs)
        if i % 2 == 0:
            acc += x
        else:
            acc -= 0.5 * x
        if tl.load(X + i * B) < 0.0:
            acc = acc * 0.0
    tl.store(Y + offs, acc)
)";
    ir::Function f = lower(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n", 3), arg(K::Int, "B", 2)});
    EXPECT_EQ(ir::verify(f), "");
    std::vector<ir::Loop> ls = ir::loops(f);
    ASSERT_EQ(ls.size(), 1u);
    ASSERT_EQ(ls[0].args.size(), 1u);
    EXPECT_EQ(f.values[f.ops[ls[0].args[0]].result].name, "acc");
    EXPECT_EQ(run_rows(f, {1, 2, 4, 6, 3, 5}, 1, 3)[0], 1 - 2 + 3);
    EXPECT_EQ(run_rows(f, {1, 2, -4, 6, 3, 5}, 1, 3)[1], 0 + 5);
}

TEST(DynamicIf, TileConditionIsRejectedWithLocation) {
    const char *src = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, B))
    if x > 0:
        x = -x
    tl.store(Y + tl.arange(0, B), x)
)";
    EXPECT_EQ(
        lower_error(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n"), arg(K::Int, "B", 8)}),
        "k.py:8:5: unsupported construct 'if': the condition is a tile (i1[B]); only scalar conditions are supported "
        "(use tl.where to choose per element)");
}

TEST(DynamicIf, BranchesGivingDifferentTypesAreRejected) {
    const char *src = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, B))
    if n > 0:
        x = x.to(tl.float16)
    tl.store(Y + tl.arange(0, B), x)
)";
    EXPECT_EQ(lower_error(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n"), arg(K::Int, "B", 8)}),
              "k.py:8:5: unsupported construct 'if': 'x' is f16[B] after one branch and f32[B] after the other; both "
              "branches must give it the same type and shape");
}

TEST(DynamicIf, NameFromOneBranchOnlyIsAnErrorWhereItIsUsed) {
    const char *src = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, B))
    if n > 0:
        z = x * 2.0
    tl.store(Y + tl.arange(0, B), z)
)";
    EXPECT_EQ(
        lower_error(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n"), arg(K::Int, "B", 8)}),
        "k.py:10:35: unsupported construct 'name 'z'': assigned in only one branch of the if on a run-time value at "
        "k.py:8:5; assign it before the if or in both branches");
}

TEST(DynamicIf, ReturnWithAValueInABranchIsRejected) {
    const char *src = R"(@triton.jit
def _pick(x, n):
    if n > 0:
        return x
    return -x


@triton.jit
def k(X, Y, n, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, B))
    tl.store(Y + tl.arange(0, B), _pick(x, n))
)";
    EXPECT_EQ(
        lower_error(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n"), arg(K::Int, "B", 8)}),
        "k.py:8:9: unsupported construct 'return with a value under an if on a run-time value': compute the result "
        "with tl.where and return it at the end of the function");
}

TEST(DynamicIf, ReturnInsideALoopIsRejected) {
    const char *src = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    for i in range(0, n):
        if i > 2:
            return
        tl.store(Y + i, 1.0)
)";
    EXPECT_EQ(lower_error(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n"), arg(K::Int, "B", 8)}),
              "k.py:9:13: unsupported construct 'return in a loop'");
}

// X's gradient mirrors the store to Y either way; whether its buffer needs zeros is the coverage of
// its own stores: every element where there is no condition, not known under one (a program may
// store nothing; the launcher then zero-fills dX).
TEST(DynamicIf, PredicatedStoresDoNotCoverTheirOutput) {
    const char *plain = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(Y + offs, tl.load(X + offs) * 2.0)
)";
    const char *early = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    if tl.program_id(0) >= n:
        return
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(Y + offs, tl.load(X + offs) * 2.0)
)";
    for (const char *src : {plain, early}) {
        ir::Function f = passes::cse(
            lower(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n", 3), arg(K::Int, "B", 4)}));
        passes::GradWrite w = passes::plan_gradient_writes(f, {"X"}, {"Y"}).at("X");
        EXPECT_EQ(w.kind, passes::GradWrite::Store);
        EXPECT_EQ(passes::analyze_access(f, {"X"}).at(0).cover.has_value(), src == plain) << src;
    }
}

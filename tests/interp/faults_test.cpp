// What the interpreter refuses, checked by status and exact message.
#include <gtest/gtest.h>

#include "kernel.h"
#include "support/error.h"

using namespace tad::interp;
using namespace tad::interp::test;

namespace {
ArgValue ptr(int id) { return ArgValue::pointer(id); }

// Runs and returns the tad::Error it raised; fails the test when nothing is raised.
tad::Error run_error(const Function &f, const std::vector<ArgValue> &args, std::array<int64_t, 3> grid, Memory &mem) {
    try {
        run(f, args, grid, mem);
    } catch (const tad::Error &e) {
        return e;
    }
    ADD_FAILURE() << "run() raised nothing";
    return tad::Error(TAD_OK, "");
}
}  // namespace

TEST(InterpFaults, OutOfBoundsStoreNamesBufferElementAndProgram) {
    Kernel k("copy");
    ValueId Y = k.ptr("Y", DType::F32);
    ValueId offs = k.block(4);
    k.b.loc = SrcLoc{7, 5};
    k.b.store(k.at(Y, offs), k.b.cast(offs, DType::F32), kNoValue);

    Memory mem;
    int yi = add_buffer(mem, "y", DType::F32, std::vector<double>(10));
    tad::Error e = run_error(k.f, {ptr(yi)}, {3, 1, 1}, mem);
    EXPECT_EQ(e.status(), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(), "k.py:7:5: out-of-bounds store of 'y' at element 10 (size 10) in program (2, 0, 0)");
}

TEST(InterpFaults, NegativeOffsetLoadIsOutOfBounds) {
    Kernel k("back");
    ValueId X = k.ptr("X", DType::F32), Y = k.ptr("Y", DType::F32);
    ValueId r = k.range(2);
    ValueId prev = k.op(OpKind::Sub, r, k.splat(k.c(1, DType::I32), r));
    k.b.loc = SrcLoc{4, 9};
    ValueId x = k.b.load(k.at(X, prev), kNoValue, kNoValue);
    k.b.store(k.at(Y, r), x, kNoValue);

    Memory mem;
    int xi = add_buffer(mem, "x", DType::F32, {1, 2});
    int yi = add_buffer(mem, "y", DType::F32, {0, 0});
    tad::Error e = run_error(k.f, {ptr(xi), ptr(yi)}, {1, 1, 1}, mem);
    EXPECT_EQ(e.status(), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(), "k.py:4:9: out-of-bounds load of 'x' at element -1 (size 2) in program (0, 0, 0)");
}

TEST(InterpFaults, IntegerDivisionByZero) {
    Kernel k("div");
    ValueId A = k.ptr("A", DType::I32);
    ValueId r = k.range(3);
    ValueId a = k.b.load(k.at(A, r), kNoValue, kNoValue);
    k.b.loc = SrcLoc{3, 12};
    k.b.store(k.at(A, r), k.op(OpKind::Div, r, a), kNoValue);

    Memory mem;
    int ai = add_buffer(mem, "a", DType::I32, {1, 0, 2});
    tad::Error e = run_error(k.f, {ptr(ai)}, {1, 1, 1}, mem);
    EXPECT_EQ(e.status(), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(), "k.py:3:12: integer division by zero in program (0, 0, 0)");
}

// A masked-off Load lane without `other` is undefined; reaching an address or a mask is an error.
TEST(InterpFaults, UndefinedLanesMayNotDecideAnything) {
    for (bool as_mask : {false, true}) {
        Kernel k("undef");
        ValueId I = k.ptr("I", DType::I32), W = k.ptr("W", DType::F32);
        ValueId r = k.range(4);
        auto below = [&](double n) { return k.op(OpKind::Lt, r, k.splat(k.c(n, DType::I32), r)); };
        ValueId idx = k.b.load(k.at(I, r), below(2), kNoValue);  // lanes 2, 3 undefined
        k.b.loc = SrcLoc{9, 3};
        if (as_mask)
            k.b.store(k.at(W, r), k.splat(k.c(1, DType::F32), r), k.b.cast(idx, DType::I1));
        else
            k.b.load(k.at(W, idx), below(3), kNoValue);

        Memory mem;
        int ii = add_buffer(mem, "i", DType::I32, {0, 1, 2, 3});
        int wi = add_buffer(mem, "w", DType::F32, {0, 0, 0, 0});
        tad::Error e = run_error(k.f, {ptr(ii), ptr(wi)}, {1, 1, 1}, mem);
        EXPECT_EQ(e.status(), TAD_ERR_INVALID_ARGUMENT);
        EXPECT_STREQ(e.what(), as_mask ? "k.py:9:3: store with an undefined mask lane in program (0, 0, 0)"
                                       : "k.py:9:3: load of 'w' at an undefined element in program (0, 0, 0)");
    }
}

TEST(InterpFaults, ArgumentsMustMatchTheParameters) {
    Kernel k("args");
    ValueId X = k.ptr("X", DType::F32);
    k.int_param("N");
    k.b.store(X, k.c(1, DType::F32), kNoValue);
    Memory mem;
    int xi = add_buffer(mem, "x", DType::F32, {0});

    tad::Error count = run_error(k.f, {ptr(xi)}, {1, 1, 1}, mem);
    EXPECT_EQ(count.status(), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(count.what(), "interp: 'args' takes 2 arguments, got 1");
    tad::Error kind = run_error(k.f, {ptr(xi), ArgValue::real(2.5)}, {1, 1, 1}, mem);
    EXPECT_STREQ(kind.what(), "interp: argument 1 ('N') of 'args' must be an integer, got a float");
    tad::Error buffer = run_error(k.f, {ptr(3), ArgValue::integer(1)}, {1, 1, 1}, mem);
    EXPECT_STREQ(buffer.what(), "interp: no buffer 3 (memory holds 1)");
    tad::Error grid = run_error(k.f, {ptr(xi), ArgValue::integer(1)}, {1, -1, 1}, mem);
    EXPECT_STREQ(grid.what(), "interp: negative grid dim -1");
    EXPECT_EQ(mem.at(xi).data, (std::vector<double>{0})) << "nothing may run after a bad launch";
}

TEST(InterpFaults, FloatOnlyMathOnIntegersIsAnIRError) {
    Kernel k("bad");
    ValueId X = k.ptr("X", DType::I32);
    ValueId r = k.range(2);
    k.b.loc = SrcLoc{2, 7};
    k.b.store(k.at(X, r), k.b.unary(OpKind::Exp, r), kNoValue);
    Memory mem;
    int xi = add_buffer(mem, "x", DType::I32, {0, 0});
    tad::Error e = run_error(k.f, {ptr(xi)}, {1, 1, 1}, mem);
    EXPECT_EQ(e.status(), TAD_ERR_INTERNAL);
    EXPECT_STREQ(e.what(), "k.py:2:7: interp: no exp on i32 operands in program (0, 0, 0)");
}

TEST(InterpFaults, InvalidIRIsRefusedBeforeRunning) {
    Kernel k("invalid");
    ValueId r = k.range(8);
    ValueId one = k.c(1, DType::I32);
    Type t = k.f.type(r);
    k.b.append(Op{OpKind::Add, {r, one}}, t);
    Memory mem;
    tad::Error e = run_error(k.f, {}, {1, 1, 1}, mem);
    EXPECT_EQ(e.status(), TAD_ERR_INTERNAL);
    EXPECT_STREQ(e.what(),
                 "interp: 'invalid' is not valid IR: op 2 (add): operand shape i32 differs from result i32[8]");
}

// A tile over Triton's element limit is refused before any program runs (no memory for it is taken).
TEST(InterpFaults, TileOverTheElementLimitIsRefused) {
    Kernel k("huge");
    ValueId Y = k.ptr("Y", DType::F32);
    k.b.loc = SrcLoc{5, 14};
    ValueId offs = k.range(int64_t(1) << 21);
    k.b.loc = SrcLoc{6, 5};
    k.b.store(k.at(Y, offs), k.b.cast(offs, DType::F32), kNoValue);

    Memory mem;
    int yi = add_buffer(mem, "y", DType::F32, std::vector<double>(4));
    tad::Error e = run_error(k.f, {ptr(yi)}, {1, 1, 1}, mem);
    EXPECT_EQ(e.status(), TAD_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(),
                 "k.py:5:14: a tile of shape [2097152] in 'huge' has more than 1048576 elements, the interpreter's "
                 "limit (and Triton's); use smaller block sizes");
    EXPECT_EQ(kMaxTileElements, 1 << 20);
}

// What the interpreter computes: values of hand-built kernels against hand-computed results.
#include <gtest/gtest.h>

#include <cmath>

#include "kernel.h"

using namespace tad::interp;
using namespace tad::interp::test;

namespace {
ArgValue ptr(int id) { return ArgValue::pointer(id); }
}  // namespace

TEST(Interp, ExpKernelStopsAtTheMaskedTail) {
    Kernel k("exp");
    ValueId X = k.ptr("X", DType::F32), Y = k.ptr("Y", DType::F32), N = k.int_param("N");
    ValueId offs = k.block(4);
    ValueId mask = k.op(OpKind::Lt, offs, k.splat(N, offs));
    ValueId x = k.b.load(k.at(X, offs), mask, kNoValue);
    k.b.store(k.at(Y, offs), k.b.unary(OpKind::Exp, x), mask);

    // Both buffers are longer than N, so lanes past the tail would be in bounds if the mask were ignored.
    std::vector<double> xs = {-2, -1.5, -1, -0.5, 0, 0.25, 0.5, 1, 1.5, 2, 50, 60};
    Memory mem;
    int xi = add_buffer(mem, "x", DType::F32, xs);
    int yi = add_buffer(mem, "y", DType::F32, std::vector<double>(12, -1.0));
    run(k.f, {ptr(xi), ptr(yi), ArgValue::integer(10)}, {3, 1, 1}, mem);

    const std::vector<double> &y = mem.at(yi).data;
    for (int i = 0; i < 10; ++i) EXPECT_DOUBLE_EQ(y[i], std::exp(xs[i])) << i;
    EXPECT_EQ(y[10], -1.0);
    EXPECT_EQ(y[11], -1.0);
    EXPECT_EQ(mem.at(xi).data, xs);
}

TEST(Interp, TwoDimTileBroadcastsAndReduces) {
    Kernel k("rows");
    ValueId X = k.ptr("X", DType::F32), S = k.ptr("S", DType::F32), Z = k.ptr("Z", DType::F32),
            C = k.ptr("C", DType::F32), T = k.ptr("T", DType::F32);
    std::vector<Dim> mn = {{2, "M"}, {3, "N"}};
    ValueId rows = k.b.expand_dims(k.b.arange(0, 2, "M"), 1);  // i32[M,1]
    ValueId cols = k.b.expand_dims(k.b.arange(0, 3, "N"), 0);  // i32[1,N]
    ValueId row_start = k.op(OpKind::Mul, rows, k.splat(k.c(3, DType::I32), rows));
    ValueId offs = k.op(OpKind::Add, k.b.broadcast(row_start, mn), k.b.broadcast(cols, mn));
    ValueId x = k.b.load(k.at(X, offs), kNoValue, kNoValue);

    ValueId row_sum = k.b.reduce(OpKind::ReduceSum, x, 1, false);  // f32[M]
    k.b.store(k.at(S, k.b.arange(0, 2, "M")), row_sum, kNoValue);
    ValueId row_max = k.b.reduce(OpKind::ReduceMax, x, 1, true);  // f32[M,1]
    ASSERT_EQ(k.f.type(row_max).str(), "f32[M,1]");
    k.b.store(k.at(Z, offs), k.op(OpKind::Sub, x, k.b.broadcast(row_max, mn)), kNoValue);
    ValueId col_min = k.b.reduce(OpKind::ReduceMin, x, 0, false);  // f32[N]
    k.b.store(k.at(C, k.b.arange(0, 3, "N")), col_min, kNoValue);
    k.b.store(T, k.b.reduce(OpKind::ReduceSum, x, -1, false), kNoValue);

    Memory mem;
    int xi = add_buffer(mem, "x", DType::F32, {1, 5, 2, -1, -4, 3});
    int si = add_buffer(mem, "s", DType::F32, {0, 0});
    int zi = add_buffer(mem, "z", DType::F32, std::vector<double>(6, 0.0));
    int ci = add_buffer(mem, "c", DType::F32, {0, 0, 0});
    int ti = add_buffer(mem, "t", DType::F32, {0});
    run(k.f, {ptr(xi), ptr(si), ptr(zi), ptr(ci), ptr(ti)}, {1, 1, 1}, mem);

    EXPECT_EQ(mem.at(si).data, (std::vector<double>{8, -2}));
    EXPECT_EQ(mem.at(zi).data, (std::vector<double>{-4, 0, -3, -4, -7, 0}));
    EXPECT_EQ(mem.at(ci).data, (std::vector<double>{-1, -4, 2}));
    EXPECT_EQ(mem.at(ti).data, (std::vector<double>{6}));
}

TEST(Interp, WhereSelectsByComparisons) {
    Kernel k("select");
    ValueId X = k.ptr("X", DType::F32), Y = k.ptr("Y", DType::F32), E = k.ptr("E", DType::F32),
            G = k.ptr("G", DType::F32);
    ValueId r = k.range(6);
    ValueId x = k.b.load(k.at(X, r), kNoValue, kNoValue);
    auto f = [&](double v) { return k.splat(k.c(v, DType::F32), r); };
    // y = where(x >= 0 & x != 1, x, -x)
    ValueId keep = k.op(OpKind::And, k.op(OpKind::Ge, x, f(0)), k.op(OpKind::Ne, x, f(1)));
    k.b.store(k.at(Y, r), k.b.where(keep, x, k.b.unary(OpKind::Neg, x)), kNoValue);
    // e = where(!(x < 2) | x == -2, 1, 0)
    ValueId pick = k.op(OpKind::Or, k.b.unary(OpKind::Not, k.op(OpKind::Lt, x, f(2))), k.op(OpKind::Eq, x, f(-2)));
    k.b.store(k.at(E, r), k.b.where(pick, f(1), f(0)), kNoValue);
    // g = float((x > 0) ^ (x <= 2))
    ValueId odd = k.op(OpKind::Xor, k.op(OpKind::Gt, x, f(0)), k.op(OpKind::Le, x, f(2)));
    k.b.store(k.at(G, r), k.b.cast(odd, DType::F32), kNoValue);

    Memory mem;
    int xi = add_buffer(mem, "x", DType::F32, {-2, -1, 0, 1, 2, 3});
    int yi = add_buffer(mem, "y", DType::F32, std::vector<double>(6));
    int ei = add_buffer(mem, "e", DType::F32, std::vector<double>(6));
    int gi = add_buffer(mem, "g", DType::F32, std::vector<double>(6));
    run(k.f, {ptr(xi), ptr(yi), ptr(ei), ptr(gi)}, {1, 1, 1}, mem);

    EXPECT_EQ(mem.at(yi).data, (std::vector<double>{2, 1, 0, -1, 2, 3}));
    EXPECT_EQ(mem.at(ei).data, (std::vector<double>{1, 0, 0, 0, 1, 1}));
    EXPECT_EQ(mem.at(gi).data, (std::vector<double>{1, 1, 1, 0, 0, 1}));
}

TEST(Interp, IntegerDivModTruncateTowardZero) {
    Kernel k("divmod");
    ValueId A = k.ptr("A", DType::I32), B = k.ptr("B", DType::I32), Q = k.ptr("Q", DType::I32),
            R = k.ptr("R", DType::I32), X = k.ptr("X", DType::I32), N = k.ptr("N", DType::I32);
    ValueId r = k.range(5);
    ValueId a = k.b.load(k.at(A, r), kNoValue, kNoValue), b = k.b.load(k.at(B, r), kNoValue, kNoValue);
    k.b.store(k.at(Q, r), k.op(OpKind::Div, a, b), kNoValue);
    k.b.store(k.at(R, r), k.op(OpKind::Mod, a, b), kNoValue);
    k.b.store(k.at(X, r), k.op(OpKind::Xor, a, b), kNoValue);
    k.b.store(k.at(N, r), k.b.unary(OpKind::Not, a), kNoValue);

    Memory mem;
    int ai = add_buffer(mem, "a", DType::I32, {-7, 7, -7, 7, 0});
    int bi = add_buffer(mem, "b", DType::I32, {2, 2, -2, -2, 3});
    int qi = add_buffer(mem, "q", DType::I32, std::vector<double>(5));
    int ri = add_buffer(mem, "r", DType::I32, std::vector<double>(5));
    int xi = add_buffer(mem, "x", DType::I32, std::vector<double>(5));
    int ni = add_buffer(mem, "n", DType::I32, std::vector<double>(5));
    run(k.f, {ptr(ai), ptr(bi), ptr(qi), ptr(ri), ptr(xi), ptr(ni)}, {1, 1, 1}, mem);

    EXPECT_EQ(mem.at(qi).data, (std::vector<double>{-3, 3, 3, -3, 0}));
    EXPECT_EQ(mem.at(ri).data, (std::vector<double>{-1, 1, -1, 1, 0}));
    EXPECT_EQ(mem.at(xi).data, (std::vector<double>{-5, 5, 7, -7, 3}));  // bitwise on ints
    EXPECT_EQ(mem.at(ni).data, (std::vector<double>{6, -8, 6, -8, -1}));
}

TEST(Interp, CastFloatToIntTruncatesAndIntToBoolIsNonZero) {
    Kernel k("cast");
    ValueId X = k.ptr("X", DType::F32), I = k.ptr("I", DType::I32), B = k.ptr("B", DType::I1);
    ValueId r = k.range(6);
    ValueId i = k.b.cast(k.b.load(k.at(X, r), kNoValue, kNoValue), DType::I32);
    k.b.store(k.at(I, r), i, kNoValue);
    k.b.store(k.at(B, r), k.b.cast(i, DType::I1), kNoValue);

    Memory mem;
    int xi = add_buffer(mem, "x", DType::F32, {-2.7, -0.5, 0.5, 2.7, 3.0, -3.0});
    int ii = add_buffer(mem, "i", DType::I32, std::vector<double>(6));
    int bi = add_buffer(mem, "b", DType::I1, std::vector<double>(6));
    run(k.f, {ptr(xi), ptr(ii), ptr(bi)}, {1, 1, 1}, mem);

    EXPECT_EQ(mem.at(ii).data, (std::vector<double>{-2, 0, 0, 2, 3, -3}));
    EXPECT_EQ(mem.at(bi).data, (std::vector<double>{1, 0, 0, 1, 1, 1}));
}

TEST(Interp, MaskedLoadYieldsOtherOrNaN) {
    Kernel k("masked");
    ValueId X = k.ptr("X", DType::F32), A = k.ptr("A", DType::F32), B = k.ptr("B", DType::F32),
            AM = k.ptr("AM", DType::F32), BM = k.ptr("BM", DType::F32);
    ValueId r = k.range(4);
    ValueId mask = k.op(OpKind::Lt, r, k.splat(k.c(2, DType::I32), r));
    ValueId a = k.b.load(k.at(X, r), mask, k.splat(k.c(7, DType::F32), r));
    ValueId b = k.b.load(k.at(X, r), mask, kNoValue);
    k.b.store(k.at(A, r), a, kNoValue);
    k.b.store(k.at(B, r), b, kNoValue);
    k.b.store(AM, k.b.reduce(OpKind::ReduceMax, a, 0, false), kNoValue);
    k.b.store(BM, k.b.reduce(OpKind::ReduceMax, b, 0, false), kNoValue);

    Memory mem;
    int xi = add_buffer(mem, "x", DType::F32, {1, 2, 3, 4});
    int ai = add_buffer(mem, "a", DType::F32, std::vector<double>(4));
    int bi = add_buffer(mem, "b", DType::F32, std::vector<double>(4));
    int ami = add_buffer(mem, "am", DType::F32, {0});
    int bmi = add_buffer(mem, "bm", DType::F32, {0});
    run(k.f, {ptr(xi), ptr(ai), ptr(bi), ptr(ami), ptr(bmi)}, {1, 1, 1}, mem);

    EXPECT_EQ(mem.at(ai).data, (std::vector<double>{1, 2, 7, 7}));
    const std::vector<double> &b_out = mem.at(bi).data;
    EXPECT_EQ(b_out[0], 1);
    EXPECT_EQ(b_out[1], 2);
    EXPECT_TRUE(std::isnan(b_out[2]));
    EXPECT_TRUE(std::isnan(b_out[3]));
    EXPECT_EQ(mem.at(ami).data[0], 7);
    EXPECT_TRUE(std::isnan(mem.at(bmi).data[0])) << "max must not hide an undefined lane";
}

TEST(Interp, UndefinedIndicesPassThroughWhileMaskedOff) {
    // idx = load(I + r, mask); w = load(W + 2 * idx, mask, other=0): the embedding-gather pattern.
    Kernel k("gather");
    ValueId I = k.ptr("I", DType::I32), W = k.ptr("W", DType::F32), Y = k.ptr("Y", DType::F32);
    ValueId r = k.range(4);
    ValueId mask = k.op(OpKind::Lt, r, k.splat(k.c(2, DType::I32), r));
    ValueId idx = k.b.load(k.at(I, r), mask, kNoValue);
    ValueId offs = k.op(OpKind::Mul, idx, k.splat(k.c(2, DType::I32), r));
    ValueId w = k.b.load(k.at(W, offs), mask, k.splat(k.c(0, DType::F32), r));
    k.b.store(k.at(Y, r), w, kNoValue);

    Memory mem;
    int ii = add_buffer(mem, "i", DType::I32, {3, 1, 0, 0});
    int wi = add_buffer(mem, "w", DType::F32, {10, 11, 12, 13, 14, 15, 16, 17});
    int yi = add_buffer(mem, "y", DType::F32, std::vector<double>(4, -1.0));
    run(k.f, {ptr(ii), ptr(wi), ptr(yi)}, {1, 1, 1}, mem);
    EXPECT_EQ(mem.at(yi).data, (std::vector<double>{16, 12, 0, 0}));
}

TEST(Interp, AtomicAddAccumulatesAcrossPrograms) {
    Kernel k("acc");
    ValueId Acc = k.ptr("Acc", DType::F32);
    ValueId r = k.range(4);
    // every program adds (pid + 1) * (r + 1) into the same four elements
    ValueId one = k.splat(k.c(1, DType::I32), r);
    ValueId scale = k.splat(k.op(OpKind::Add, k.b.program_id(0), k.c(1, DType::I32)), r);
    ValueId v = k.b.cast(k.op(OpKind::Mul, scale, k.op(OpKind::Add, r, one)), DType::F32);
    k.b.atomic_add(k.at(Acc, r), v, kNoValue, "relaxed");

    Memory mem;
    int acc = add_buffer(mem, "acc", DType::F32, std::vector<double>(4, 0.5));
    run(k.f, {ptr(acc)}, {5, 1, 1}, mem);
    EXPECT_EQ(mem.at(acc).data, (std::vector<double>{15.5, 30.5, 45.5, 60.5}));
}

TEST(Interp, ProgramIdsAndCountsOnA2DGridRunXFastest) {
    Kernel k("grid");
    ValueId Out = k.ptr("Out", DType::I32), Order = k.ptr("Order", DType::I32), Count = k.ptr("Count", DType::I32);
    auto i32 = [&](double v) { return k.c(v, DType::I32); };
    ValueId p0 = k.b.program_id(0), p1 = k.b.program_id(1);
    ValueId n0 = k.b.num_programs(0), n1 = k.b.num_programs(1);
    // out[p1 * n0 + p0] = p0 + 10 p1 + 100 n0 + 1000 n1
    ValueId slot = k.op(OpKind::Add, k.op(OpKind::Mul, p1, n0), p0);
    ValueId id = k.op(OpKind::Add, p0, k.op(OpKind::Mul, p1, i32(10)));
    ValueId counts = k.op(OpKind::Add, k.op(OpKind::Mul, n0, i32(100)), k.op(OpKind::Mul, n1, i32(1000)));
    k.b.store(k.b.add_ptr(Out, slot), k.op(OpKind::Add, id, counts), kNoValue);
    // order[count++] = p0 + 10 p1: the sequence in which programs ran
    ValueId seq = k.b.load(Count, kNoValue, kNoValue);
    k.b.store(k.b.add_ptr(Order, seq), id, kNoValue);
    k.b.atomic_add(Count, i32(1), kNoValue, "relaxed");

    Memory mem;
    int out = add_buffer(mem, "out", DType::I32, std::vector<double>(6));
    int order = add_buffer(mem, "order", DType::I32, std::vector<double>(6));
    int count = add_buffer(mem, "count", DType::I32, {0});
    run(k.f, {ptr(out), ptr(order), ptr(count)}, {3, 2, 1}, mem);

    EXPECT_EQ(mem.at(out).data, (std::vector<double>{2300, 2301, 2302, 2310, 2311, 2312}));
    EXPECT_EQ(mem.at(order).data, (std::vector<double>{0, 1, 2, 10, 11, 12}));
    EXPECT_EQ(mem.at(count).data, (std::vector<double>{6}));
}

TEST(Interp, PointerOffsetArgumentShiftsTheBase) {
    Kernel k("shift");
    ValueId X = k.ptr("X", DType::F32);
    ValueId r = k.range(2);
    k.b.store(k.at(X, r), k.b.cast(r, DType::F32), kNoValue);

    Memory mem;
    int xi = add_buffer(mem, "x", DType::F32, std::vector<double>(5, -1.0));
    run(k.f, {ArgValue::pointer(xi, 2)}, {1, 1, 1}, mem);
    EXPECT_EQ(mem.at(xi).data, (std::vector<double>{-1, -1, 0, 1, -1}));
}

TEST(Interp, ReshapeJoinAndSplitKeepRowMajorOrder) {
    Kernel k("lanes");
    ValueId X = k.ptr("X", DType::F32), J = k.ptr("J", DType::F32), E = k.ptr("E", DType::F32),
            O = k.ptr("O", DType::F32), PJ = k.ptr("PJ", DType::F32), PO = k.ptr("PO", DType::F32);
    ValueId r3 = k.range(3), r6 = k.range(6);
    std::vector<Dim> three_by_two = {{3, "3"}, {2, "2"}};
    ValueId a = k.b.load(k.at(X, r3), kNoValue, kNoValue);  // x[0:3]
    ValueId b =
        k.b.load(k.at(X, k.op(OpKind::Add, r3, k.splat(k.c(3, DType::I32), r3))), kNoValue, kNoValue);  // x[3:6]
    k.b.store(k.at(J, r6), k.b.reshape(k.b.join(a, b), {{6, "6"}}), kNoValue);
    ValueId pairs = k.b.reshape(k.b.load(k.at(X, r6), kNoValue, kNoValue), three_by_two);
    k.b.store(k.at(E, r3), k.b.split(pairs, 0), kNoValue);
    k.b.store(k.at(O, r3), k.b.split(pairs, 1), kNoValue);
    // The same moves on pointer lanes.
    ValueId pa = k.at(X, r3), pb = k.b.add_ptr(pa, k.splat(k.c(3, DType::I32), r3));
    k.b.store(k.at(PJ, r6), k.b.load(k.b.reshape(k.b.join(pa, pb), {{6, "6"}}), kNoValue, kNoValue), kNoValue);
    ValueId odd = k.b.split(k.b.reshape(k.at(X, r6), three_by_two), 1);
    k.b.store(k.at(PO, r3), k.b.load(odd, kNoValue, kNoValue), kNoValue);

    Memory mem;
    int xi = add_buffer(mem, "x", DType::F32, {10, 11, 12, 13, 14, 15});
    int ji = add_buffer(mem, "j", DType::F32, std::vector<double>(6));
    int ei = add_buffer(mem, "e", DType::F32, std::vector<double>(3));
    int oi = add_buffer(mem, "o", DType::F32, std::vector<double>(3));
    int pji = add_buffer(mem, "pj", DType::F32, std::vector<double>(6));
    int poi = add_buffer(mem, "po", DType::F32, std::vector<double>(3));
    run(k.f, {ptr(xi), ptr(ji), ptr(ei), ptr(oi), ptr(pji), ptr(poi)}, {1, 1, 1}, mem);

    EXPECT_EQ(mem.at(ji).data, (std::vector<double>{10, 13, 11, 14, 12, 15}));
    EXPECT_EQ(mem.at(ei).data, (std::vector<double>{10, 12, 14}));
    EXPECT_EQ(mem.at(oi).data, (std::vector<double>{11, 13, 15}));
    EXPECT_EQ(mem.at(pji).data, (std::vector<double>{10, 13, 11, 14, 12, 15}));
    EXPECT_EQ(mem.at(poi).data, (std::vector<double>{11, 13, 15}));
}

namespace {
// Row-major offsets of a [m, n] tile, i32[M,N].
ValueId offsets_2d(Kernel &k, int64_t m, int64_t n) {
    std::vector<Dim> mn = {{m, "M"}, {n, "N"}};
    ValueId rows = k.b.expand_dims(k.b.arange(0, m, "M"), 1), cols = k.b.expand_dims(k.b.arange(0, n, "N"), 0);
    ValueId row_start = k.op(OpKind::Mul, rows, k.splat(k.c(double(n), DType::I32), rows));
    return k.op(OpKind::Add, k.b.broadcast(row_start, mn), k.b.broadcast(cols, mn));
}
}  // namespace

TEST(Interp, CumSumRunsAlongItsAxisInEitherDirection) {
    Kernel k("cumsum");
    ValueId X = k.ptr("X", DType::F32), F = k.ptr("F", DType::F32), B = k.ptr("B", DType::F32);
    ValueId offs = offsets_2d(k, 2, 3);
    ValueId x = k.b.load(k.at(X, offs), kNoValue, kNoValue);
    k.b.store(k.at(F, offs), k.b.cumsum(x, 1, false), kNoValue);
    k.b.store(k.at(B, offs), k.b.cumsum(x, 0, true), kNoValue);

    Memory mem;
    int xi = add_buffer(mem, "x", DType::F32, {1, 2, 3, 4, 5, 6});
    int fi = add_buffer(mem, "f", DType::F32, std::vector<double>(6));
    int bi = add_buffer(mem, "b", DType::F32, std::vector<double>(6));
    run(k.f, {ptr(xi), ptr(fi), ptr(bi)}, {1, 1, 1}, mem);

    EXPECT_EQ(mem.at(fi).data, (std::vector<double>{1, 3, 6, 4, 9, 15}));
    EXPECT_EQ(mem.at(bi).data, (std::vector<double>{5, 7, 9, 4, 5, 6}));
}

TEST(Interp, ArgmaxAndArgminTakeTheFirstOfTiedExtremes) {
    Kernel k("argext");
    ValueId X = k.ptr("X", DType::F32), MX = k.ptr("MX", DType::I32), MN = k.ptr("MN", DType::I32),
            C = k.ptr("C", DType::I32), U = k.ptr("U", DType::I32);
    ValueId offs = offsets_2d(k, 2, 4);
    ValueId x = k.b.load(k.at(X, offs), kNoValue, kNoValue);
    ValueId r2 = k.b.arange(0, 2, "M");
    k.b.store(k.at(MX, r2), k.b.reduce(OpKind::Argmax, x, 1, false), kNoValue);
    k.b.store(k.at(MN, r2), k.b.reduce(OpKind::Argmin, x, 1, false), kNoValue);
    ValueId col_min = k.b.reduce(OpKind::Argmin, x, 0, true);  // i32[1,N]
    ASSERT_EQ(k.f.type(col_min).str(), "i32[1,N]");
    ValueId cols = k.b.expand_dims(k.b.arange(0, 4, "N"), 0);
    k.b.store(k.at(C, cols), col_min, kNoValue);
    // A masked-off lane without `other` is undefined, and so is the index of the max it could hide.
    ValueId r4 = k.range(4);
    ValueId half = k.b.load(k.at(X, r4), k.op(OpKind::Lt, r4, k.splat(k.c(2, DType::I32), r4)), kNoValue);
    k.b.store(U, k.b.reduce(OpKind::Argmax, half, 0, false), kNoValue);

    Memory mem;
    int xi = add_buffer(mem, "x", DType::F32, {3, 7, 7, 1, 3, 2, 7, 5});
    int mxi = add_buffer(mem, "mx", DType::I32, std::vector<double>(2));
    int mni = add_buffer(mem, "mn", DType::I32, std::vector<double>(2));
    int ci = add_buffer(mem, "c", DType::I32, std::vector<double>(4));
    int ui = add_buffer(mem, "u", DType::I32, {0});
    run(k.f, {ptr(xi), ptr(mxi), ptr(mni), ptr(ci), ptr(ui)}, {1, 1, 1}, mem);

    EXPECT_EQ(mem.at(mxi).data, (std::vector<double>{1, 2}));
    EXPECT_EQ(mem.at(mni).data, (std::vector<double>{3, 1}));
    EXPECT_EQ(mem.at(ci).data, (std::vector<double>{0, 1, 0, 0}));
    EXPECT_TRUE(std::isnan(mem.at(ui).data[0])) << "argmax must not hide an undefined lane";
}

TEST(Interp, LibdeviceMathAtKnownPoints) {
    struct Case {
        OpKind op;
        double x, y, want;  // y: Pow's exponent
    };
    const double pi = std::acos(-1.0);
    const Case cases[] = {
        {OpKind::Log1p, std::exp(1.0) - 1, 0, 1},
        {OpKind::Expm1, std::log(2.0), 0, 1},
        {OpKind::Tan, pi / 4, 0, 1},
        {OpKind::Atan, 1, 0, pi / 4},
        {OpKind::Sinh, std::log(2.0), 0, 0.75},
        {OpKind::Cosh, std::log(2.0), 0, 1.25},
        {OpKind::Asin, 0.5, 0, pi / 6},
        {OpKind::Acos, 0.5, 0, pi / 3},
        {OpKind::Pow, 2, 3, 8},
        {OpKind::Pow, 4, -0.5, 0.5},
    };
    for (const Case &c : cases) {
        Kernel k("math");
        ValueId X = k.ptr("X", DType::F32), Y = k.ptr("Y", DType::F32);
        ValueId x = k.b.load(X, kNoValue, kNoValue);
        ValueId y = c.op == OpKind::Pow ? k.op(OpKind::Pow, x, k.c(c.y, DType::F32)) : k.b.unary(c.op, x);
        k.b.store(Y, y, kNoValue);
        Memory mem;
        int xi = add_buffer(mem, "x", DType::F32, {c.x});
        int yi = add_buffer(mem, "y", DType::F32, {0});
        run(k.f, {ptr(xi), ptr(yi)}, {1, 1, 1}, mem);
        EXPECT_NEAR(mem.at(yi).data[0], c.want, 1e-15) << op_name(c.op) << "(" << c.x << ")";
    }
}

#include <gtest/gtest.h>

#include "ir/ir.h"

using namespace tad::ir;

namespace {
// x[i] = exp(X[pid*B + arange(B)]) for a 1-D kernel, built by hand.
Function exp_kernel() {
    Function f;
    f.name = "k";
    Builder b(f);
    ValueId X = b.param("X", ParamKind::Pointer, Type{DType::F32, true, {}});
    ValueId pid = b.program_id(0);
    ValueId B = b.constant(16, DType::I32, "BLOCK");
    ValueId base = b.binary(OpKind::Mul, pid, B);
    ValueId r = b.arange(0, 16, "BLOCK");
    ValueId offs = b.binary(OpKind::Add, b.broadcast(base, f.type(r).shape), r);
    ValueId p = b.add_ptr(b.broadcast(X, f.type(offs).shape), offs);
    ValueId x = b.load(p, kNoValue, kNoValue);
    b.store(p, b.unary(OpKind::Exp, x), kNoValue);
    return f;
}
}  // namespace

TEST(IR, PrintIsDeterministicAndTyped) {
    Function f = exp_kernel();
    EXPECT_EQ(verify(f), "");
    std::string text = print(f);
    EXPECT_EQ(text, print(exp_kernel()));
    EXPECT_NE(text.find("%9 = load %8 : f32[BLOCK=16]"), std::string::npos) << text;
    EXPECT_NE(text.find("%4 = arange 0, 16 : i32[BLOCK=16]"), std::string::npos) << text;
}

TEST(IR, UsersListEachReadingOpInOrder) {
    const Function f = exp_kernel();  // %8 = add_ptr, %9 = load %8, %10 = exp %9, store %8, %10
    const std::vector<std::vector<int>> u = users(f);
    ASSERT_EQ(u.size(), f.values.size());
    EXPECT_EQ(u[8], (std::vector<int>{9, 11}));
    EXPECT_EQ(u[9], (std::vector<int>{10}));
    EXPECT_EQ(u[10], (std::vector<int>{11}));
    EXPECT_EQ(u[4], (std::vector<int>{6}));  // the arange, added to the broadcast base
}

TEST(IR, VerifierRejectsShapeMismatch) {
    Function f;
    Builder b(f);
    ValueId r = b.arange(0, 8, "8");
    ValueId c = b.constant(1, DType::I32);
    b.append(Op{OpKind::Add, {r, c}}, f.type(r));
    EXPECT_NE(verify(f).find("operand shape i32 differs from result i32[8]"), std::string::npos) << verify(f);
}

TEST(IR, BroadcastShapesFollowNumpy) {
    std::vector<Dim> out;
    ASSERT_TRUE(broadcast_shapes({{4, "M"}, {1, "1"}}, {{8, "N"}}, &out));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].expr, "M");
    EXPECT_EQ(out[1].expr, "N");
    EXPECT_FALSE(broadcast_shapes({{4, "M"}}, {{8, "N"}}, &out));
}

TEST(IR, ShapeScanAndIndexOpsTypeAndPrint) {
    Function f;
    Builder b(f);
    ValueId X = b.param("X", ParamKind::Pointer, Type{DType::F32, true, {}});
    ValueId x = b.load(b.broadcast(X, {{4, "M"}, {8, "N"}}), kNoValue, kNoValue);  // %2
    ValueId r = b.reshape(x, {{2, "2"}, {16, "2 * N"}});
    ValueId j = b.join(r, r);
    ValueId s = b.split(j, 1);
    ValueId c = b.cumsum(x, 1, true);
    ValueId am = b.reduce(OpKind::Argmax, x, 0, true);
    ValueId an = b.reduce(OpKind::Argmin, x, 1, false);
    ValueId p = b.binary(OpKind::Pow, x, b.unary(OpKind::Log1p, x));
    EXPECT_EQ(verify(f), "");
    EXPECT_EQ(f.type(r).str(), "f32[2,2 * N]");
    EXPECT_EQ(f.type(j).str(), "f32[2,2 * N,2]");
    EXPECT_EQ(f.type(s).str(), "f32[2,2 * N]");
    EXPECT_EQ(f.type(c).str(), "f32[M,N]");
    EXPECT_EQ(f.type(am).str(), "i32[1,N]");
    EXPECT_EQ(f.type(an).str(), "i32[M]");
    EXPECT_EQ(f.type(p).str(), "f32[M,N]");
    std::string text = print(f);
    for (const char *line : {"%3 = reshape %2 : f32[2,\"2 * N\"=16]", "%4 = join %3, %3 : f32[2,\"2 * N\"=16,2]",
                             "%5 = split %4 #1 : f32[2,\"2 * N\"=16]", "%6 = cumsum %2 axis=1 reverse : f32[M=4,N=8]",
                             "%7 = argmax %2 axis=0 keep_dims : i32[1,N=8]", "%8 = argmin %2 axis=1 : i32[M=4]",
                             "%9 = log1p %2 : f32[M=4,N=8]", "%10 = pow %2, %9 : f32[M=4,N=8]"})
        EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
}

TEST(IR, VerifierChecksShapeScanAndIndexOps) {
    // Each case appends one bad op to a function holding x: f32[4,8] and i: i32[4,8].
    struct Case {
        const char *want;
        void (*bad)(Builder &, ValueId x, ValueId i);
    };
    const Case cases[] = {
        {"f32[M,N] does not reshape to f32[16]",
         [](Builder &b, ValueId x, ValueId) {
             b.reshape(x, {{16, "16"}});
         }},
        {"f32[M,N] does not reshape to i32[32]",
         [](Builder &b, ValueId x, ValueId) {
             b.append(Op{OpKind::Reshape, {x}}, Type{DType::I32, false, {{32, "32"}}});
         }},
        {"operand types f32[M,N] and i32[M,N] differ", [](Builder &b, ValueId x, ValueId i) { b.join(x, i); }},
        {"result f32[M,N] should be f32[M,N,2]",
         [](Builder &b, ValueId x, ValueId) {
             b.append(Op{OpKind::Join, {x, x}}, b.func().type(x));
         }},
        {"the last dim of f32[M,N] is not 2", [](Builder &b, ValueId x, ValueId) { b.split(x, 0); }},
        {"half 2 is not 0 or 1", [](Builder &b, ValueId x, ValueId) { b.split(b.join(x, x), 2); }},
        {"axis 2 out of range", [](Builder &b, ValueId x, ValueId) { b.cumsum(x, 2, false); }},
        {"axis -1 out of range", [](Builder &b, ValueId x, ValueId) { b.reduce(OpKind::Argmax, x, -1, false); }},
        {"result f32[N] should be i32[N]",
         [](Builder &b, ValueId x, ValueId) {
             b.append(Op{OpKind::Argmin, {x}}, Type{DType::F32, false, {{8, "N"}}});
         }},
        {"operand element types differ", [](Builder &b, ValueId x, ValueId i) { b.binary(OpKind::Pow, x, i); }},
    };
    for (const Case &c : cases) {
        Function f;
        Builder b(f);
        ValueId X = b.param("X", ParamKind::Pointer, Type{DType::F32, true, {}});
        ValueId x = b.load(b.broadcast(X, {{4, "M"}, {8, "N"}}), kNoValue, kNoValue);
        ValueId i = b.cast(x, DType::I32);
        ASSERT_EQ(verify(f), "");
        c.bad(b, x, i);
        EXPECT_NE(verify(f).find(c.want), std::string::npos) << "want: " << c.want << "\ngot: " << verify(f);
    }
}

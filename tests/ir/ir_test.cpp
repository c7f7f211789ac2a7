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
    EXPECT_NE(text.find("%9 = load %8 : f32[BLOCK]"), std::string::npos) << text;
    EXPECT_NE(text.find("%4 = arange 0, 16 : i32[BLOCK]"), std::string::npos) << text;
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

// The Triton spellings of ops, in kernels built by hand.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "emit/emit.h"
#include "passes/write_parts.h"

using namespace tad;
using namespace tad::ir;

namespace {

// A kernel loading x: f32[M,N] from X; `body` builds values from it, each stored to a parameter
// of its own (Y0, Y1, ...) broadcast to the value's shape. `parts`: emitted as a backward kernel,
// its writes in parts (passes/write_parts.h).
std::string emit_with(const std::function<std::vector<ValueId>(Builder &, ValueId x)> &body, bool parts = false) {
    Function f;
    f.name = "k";
    f.constexprs = {{"M", "4"}, {"N", "8"}};
    Builder b(f);
    const std::vector<Dim> mn = {{4, "M"}, {8, "N"}};
    ValueId X = b.param("X", ParamKind::Pointer, Type{DType::F32, true, {}});
    ValueId rows = b.expand_dims(b.arange(0, 4, "M"), 1);
    ValueId row_start = b.binary(OpKind::Mul, rows, b.broadcast(b.constant(8, DType::I32, "N"), f.type(rows).shape));
    ValueId offs =
        b.binary(OpKind::Add, b.broadcast(row_start, mn), b.broadcast(b.expand_dims(b.arange(0, 8, "N"), 0), mn));
    ValueId x = b.load(b.add_ptr(b.broadcast(X, mn), offs), kNoValue, kNoValue);
    f.values[x].name = "x";
    std::vector<ValueId> outs = body(b, x);
    for (size_t k = 0; k < outs.size(); ++k) {
        Type t = f.type(outs[k]);
        ValueId y = b.param("Y" + std::to_string(k), ParamKind::Pointer, Type{t.elem, true, {}});
        b.store(b.broadcast(y, t.shape), outs[k], kNoValue);
    }
    return emit::emit_kernel(f, "", parts);
}

}  // namespace

// Checked on the GPU with Triton 3.6 against torch when written.
TEST(EmitKernel, ShapeScanAndIndexOps) {
    std::string py = emit_with([](Builder &b, ValueId x) -> std::vector<ValueId> {
        ValueId pairs = b.reshape(x, {{16, "M * N // 2"}, {2, "2"}});
        ValueId swapped = b.join(b.split(pairs, 1), b.split(pairs, 0));
        return {b.reshape(swapped, {{32, "M * N"}}), b.cumsum(x, 1, false), b.cumsum(x, 0, true),
                b.reduce(OpKind::Argmax, x, 1, false), b.reduce(OpKind::Argmin, x, 0, true)};
    });
    EXPECT_EQ(py, R"(@triton.jit
def k(X, Y0, Y1, Y2, Y3, Y4, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + (tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]))
    t0 = tl.reshape(x, (M * N // 2, 2))
    tl.store(tl.broadcast_to(Y0, (M * N,)), tl.reshape(tl.join(tl.split(t0)[1], tl.split(t0)[0]), (M * N,)))
    tl.store(tl.broadcast_to(Y1, (M, N)), tl.cumsum(x, axis=1))
    tl.store(tl.broadcast_to(Y2, (M, N)), tl.cumsum(x, axis=0, reverse=True))
    tl.store(tl.broadcast_to(Y3, (M,)), tl.argmax(x, axis=1))
    tl.store(tl.broadcast_to(Y4, (1, N)), tl.argmin(x, axis=0, keep_dims=True))
)");
}

TEST(EmitKernel, LibdeviceMath) {
    std::string py = emit_with([](Builder &b, ValueId x) -> std::vector<ValueId> {
        std::vector<ValueId> ys;
        for (OpKind k : {OpKind::Log1p, OpKind::Expm1, OpKind::Tan, OpKind::Atan, OpKind::Sinh, OpKind::Cosh,
                         OpKind::Asin, OpKind::Acos})
            ys.push_back(b.unary(k, x));
        ys.push_back(b.binary(OpKind::Pow, x, b.broadcast(b.constant(1.5, DType::F32), b.func().type(x).shape)));
        return ys;
    });
    EXPECT_EQ(py, R"(@triton.jit
def k(X, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + (tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]))
    tl.store(tl.broadcast_to(Y0, (M, N)), libdevice.log1p(x))
    tl.store(tl.broadcast_to(Y1, (M, N)), libdevice.expm1(x))
    tl.store(tl.broadcast_to(Y2, (M, N)), libdevice.tan(x))
    tl.store(tl.broadcast_to(Y3, (M, N)), libdevice.atan(x))
    tl.store(tl.broadcast_to(Y4, (M, N)), libdevice.sinh(x))
    tl.store(tl.broadcast_to(Y5, (M, N)), libdevice.cosh(x))
    tl.store(tl.broadcast_to(Y6, (M, N)), libdevice.asin(x))
    tl.store(tl.broadcast_to(Y7, (M, N)), libdevice.acos(x))
    tl.store(tl.broadcast_to(Y8, (M, N)), libdevice.pow(x, 1.5))
)");
}

// A math function of a number made of constants (the closed form's log(1) where it reads a saved
// logsumexp) is spelled on a 0-d tensor: Triton has the number as a Python float, which tl.log
// rejects (so does tad's frontend, reading the module back). A scalar parameter's stays as it is.
TEST(EmitKernel, MathOfAConstantNumberOnA0dTensor) {
    std::string py = emit_with([](Builder &b, ValueId x) -> std::vector<ValueId> {
        ValueId one = b.constant(1.0, DType::F32);
        ValueId s = b.param("s", ParamKind::Float, Type{DType::F32, false, {}});
        ValueId sum = b.binary(OpKind::Add, b.reduce(OpKind::ReduceSum, x, -1, false), b.unary(OpKind::Log, one));
        return {b.binary(OpKind::Add, sum, b.unary(OpKind::Exp, s))};
    });
    EXPECT_NE(py.find("tl.sum(x) + tl.log(tl.full((), 1.0, tl.float32)) + tl.exp(s)"), std::string::npos) << py;
}

// A loop nested in another, carrying a value whose init is defined outside both (as the backward's
// rerun of a recurrence from a loaded initial state): the init is read on every outer iteration, so
// the carried value gets a name of its own instead of overwriting the init's.
TEST(EmitKernel, NestedLoopKeepsAnInitDefinedOutsideTheOuterLoop) {
    Function f;
    f.name = "k";
    f.constexprs = {{"B", "8"}};
    Builder b(f);
    const std::vector<Dim> lanes = {{8, "B"}};
    ValueId X = b.param("X", ParamKind::Pointer, Type{DType::F32, true, {}});
    ValueId Y = b.param("Y", ParamKind::Pointer, Type{DType::F32, true, {}});
    ValueId T = b.param("T", ParamKind::Int, Type{DType::I32, false, {}});
    ValueId offs = b.arange(0, 8, "B");
    ValueId h0 = b.load(b.add_ptr(b.broadcast(X, lanes), offs), kNoValue, kNoValue);
    f.values[h0].name = "h";
    ValueId zero = b.constant(0, DType::I32), one = b.constant(1, DType::I32);
    ValueId t = b.for_begin(zero, T, one, "range");
    f.values[t].name = "t";
    ValueId s = b.for_begin(zero, t, one, "range");
    f.values[s].name = "s";
    ValueId h = b.loop_arg(h0, 0);
    f.values[h].name = "h";
    ValueId half = b.broadcast(b.constant(0.5, DType::F32), lanes);
    b.for_end({b.binary(OpKind::Mul, h, half)});
    ValueId hs = b.loop_result(0, f.type(h0));
    ValueId row =
        b.binary(OpKind::Add, b.broadcast(b.binary(OpKind::Mul, t, b.constant(8, DType::I32, "B")), lanes), offs);
    b.store(b.add_ptr(b.broadcast(Y, lanes), row), hs, kNoValue);
    b.for_end({});
    EXPECT_EQ(emit::emit_kernel(f, ""), R"(@triton.jit
def k(X, Y, T, B: tl.constexpr):
    t0 = tl.arange(0, B)
    h = tl.load(X + t0)
    for t in range(T):
        h_1 = h
        for s in range(t):
            h_1 = h_1 * 0.5
        tl.store(Y + (t * B + t0), h_1)
)");
}

// A backward kernel with two dots writing two tensors: each write in its part, selected by the
// constexpr TAD_PART (0, its default, selects both); as a forward (no parts), the plain kernel.
TEST(EmitKernel, WritesInParts) {
    auto body = [](Builder &b, ValueId x) -> std::vector<ValueId> {
        return {b.dot(x, b.trans(x), DType::F32, ""), b.dot(b.trans(x), x, DType::F32, "")};
    };
    EXPECT_EQ(emit_with(body, true), R"(@triton.jit
def k(X, Y0, Y1, M: tl.constexpr, N: tl.constexpr, TAD_PART: tl.constexpr = 0):
    x = tl.load(X + (tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]))
    if TAD_PART == 0 or TAD_PART == 1:
        tl.store(tl.broadcast_to(Y0, (M, M)), tl.dot(x, tl.trans(x)))
    if TAD_PART == 0 or TAD_PART == 2:
        tl.store(tl.broadcast_to(Y1, (N, N)), tl.dot(tl.trans(x), x))
)");
    EXPECT_EQ(emit_with(body, false).find("TAD_PART"), std::string::npos);
}

// No parts where one launch would read what another writes, where one dot leaves the shared memory
// to the rest, or where one tensor is written.
TEST(EmitKernel, NoPartsUnlessSound) {
    Function f;
    f.name = "k";
    Builder b(f);
    const std::vector<Dim> mm = {{16, "16"}, {16, "16"}};
    ValueId X = b.param("X", ParamKind::Pointer, Type{DType::F32, true, {}});
    ValueId Y = b.param("Y", ParamKind::Pointer, Type{DType::F32, true, {}});
    ValueId offs = b.binary(OpKind::Add, b.broadcast(b.expand_dims(b.arange(0, 16, "16"), 1), mm),
                            b.broadcast(b.expand_dims(b.arange(0, 16, "16"), 0), mm));
    ValueId x = b.load(b.add_ptr(b.broadcast(X, mm), offs), kNoValue, kNoValue);
    ValueId d = b.dot(x, x, DType::F32, "");
    b.store(b.add_ptr(b.broadcast(Y, mm), offs), d, kNoValue);
    EXPECT_TRUE(passes::write_parts(f).empty()) << "one dot";
    ValueId e = b.dot(d, x, DType::F32, "");
    EXPECT_TRUE(passes::write_parts(f).empty()) << "one tensor written";
    b.atomic_add(b.add_ptr(b.broadcast(X, mm), offs), e, kNoValue, "relaxed");
    EXPECT_TRUE(passes::write_parts(f).empty()) << "X read and written";
}

// AST -> tile IR: static branches, Triton's type promotion, and rejected constructs.
#include <gtest/gtest.h>

#include <cmath>

#include "driver/pipeline.h"
#include "emit/emit.h"
#include "frontend/lower.h"
#include "frontend/parser.h"
#include "interp/interp.h"
#include "passes/passes.h"
#include "support/error.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;

namespace {

frontend::ArgBinding tensor(const std::string &name, ir::DType t = ir::DType::F32) {
    frontend::ArgBinding b;
    b.kind = frontend::ArgBinding::Tensor;
    b.name = name;
    b.dtype = t;
    return b;
}

frontend::ArgBinding integer(const std::string &name, int64_t v) {
    frontend::ArgBinding b;
    b.kind = frontend::ArgBinding::Int;
    b.name = name;
    b.ival = v;
    return b;
}

ir::Function lower(const std::string &src, const std::vector<frontend::ArgBinding> &args) {
    return frontend::lower_kernel(frontend::parse_source("k.py", src), "k", args);
}

const char *kBranch = R"(import triton
import triton.language as tl


@triton.jit
def k(X, Y, SCALE: tl.constexpr, B: tl.constexpr):
    offs = tl.arange(0, B)
    x = tl.load(X + offs)
    if SCALE:
        y = x * 2.0
    else:
        y = x
    tl.store(Y + offs, y)
)";

}  // namespace

TEST(Lower, StaticIfTakesOneBranchAndRecordsTheSpecialization) {
    ir::Function on = lower(kBranch, {tensor("X"), tensor("Y"), integer("SCALE", 1), integer("B", 16)});
    ir::Function off = lower(kBranch, {tensor("X"), tensor("Y"), integer("SCALE", 0), integer("B", 16)});
    EXPECT_NE(ir::print(on).find("mul"), std::string::npos) << ir::print(on);
    EXPECT_EQ(ir::print(off).find("mul"), std::string::npos) << ir::print(off);
    ASSERT_EQ(on.specialized.size(), 1u);
    EXPECT_EQ(on.specialized[0], "SCALE");
    ASSERT_EQ(on.constexprs.size(), 2u);
    EXPECT_EQ(on.type(on.ops.back().operands[1]).str(), "f32[B]");
}

TEST(Lower, DebugBarrierIsKeptAndEmittedBack) {
    const char *src = R"(import triton
import triton.language as tl


@triton.jit
def k(X, B: tl.constexpr):
    offs = tl.arange(0, B)
    x = tl.load(X + offs)
    tl.debug_barrier()
    tl.store(X + offs, x + 1.0)
)";
    ir::Function f = passes::dce(passes::cse(lower(src, {tensor("X"), integer("B", 16)})));
    std::string ir = ir::print(f);
    size_t load = ir.find("load"), barrier = ir.find("barrier"), store = ir.find("store");
    ASSERT_NE(barrier, std::string::npos) << ir;
    EXPECT_TRUE(load < barrier && barrier < store) << ir;
    EXPECT_NE(emit::emit_kernel(f, "").find("    tl.debug_barrier()\n"), std::string::npos);
}

TEST(Lower, TritonPromotion) {
    const char *src = R"(import triton
import triton.language as tl


@triton.jit
def k(X, Y, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    h = tl.load(X + offs)
    a = h * 0.5
    b = h + tl.load(Y + offs)
    c = offs / n
    tl.store(Y + offs, a + b + c)
)";
    ir::Function f =
        lower(src, {tensor("X", ir::DType::F16), tensor("Y", ir::DType::F32), integer("n", 7), integer("B", 8)});
    std::string text = ir::print(f);
    // A Python float keeps the f16 tile's type; f16 + f32 promotes to f32; int / int is f32.
    EXPECT_NE(text.find("const 0.5 : f16"), std::string::npos) << text;
    EXPECT_NE(text.find(": f32[B=8]  // b"), std::string::npos) << text;
    EXPECT_NE(text.find(": f32[B=8]  // c"), std::string::npos) << text;
    EXPECT_EQ(ir::verify(f), "");
}

TEST(Lower, UnknownBuiltinIsRejected) {
    const char *src = R"(import triton
import triton.language as tl


@triton.jit
def k(X, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, B))
    tl.store(X + tl.arange(0, B), tl.histogram(x, 4))
)";
    try {
        lower(src, {tensor("X"), integer("B", 8)});
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  "k.py:8:35: unsupported construct 'tl.histogram': not in tad's rules table yet; call it from a "
                  "@triton.jit helper and give that helper a differentiable definition in TAD_DIFFERENTIATE_AS = "
                  "{helper: definition}");
    }
}

// An atomic other than atomic_add is a store: the hint to define a helper does not apply to it.
TEST(Lower, AtomicsOtherThanAddAreRejectedAsSuch) {
    const char *src = R"(import triton
import triton.language as tl


@triton.jit
def k(X, Amax, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, B))
    tl.atomic_max(Amax, tl.max(tl.abs(x), axis=0))
)";
    try {
        lower(src, {tensor("X"), tensor("Amax"), integer("B", 8)});
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  "k.py:8:5: unsupported construct 'tl.atomic_max': of Triton's atomics tad differentiates "
                  "tl.atomic_add only; compute this one with torch in the stub");
    }
}

// Constructs whose gradient has no defined mapping are refused with the reason.
TEST(Lower, OrderFreeAndNonAddScansAreRejected) {
    const char *cat = R"(import triton
import triton.language as tl


@triton.jit
def k(X, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, B))
    tl.store(X + tl.arange(0, 2 * B), tl.cat(x, x, can_reorder=True))
)";
    try {
        lower(cat, {tensor("X"), integer("B", 8)});
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  "k.py:8:39: unsupported construct 'tl.cat': triton 3.6 may reorder the elements "
                  "(can_reorder=True is required), so no gradient can be mapped back");
    }
    const char *scan = R"(import triton
import triton.language as tl


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def k(X, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, B))
    tl.store(X + tl.arange(0, B), tl.associative_scan(x, 0, _mul))
)";
    try {
        lower(scan, {tensor("X"), integer("B", 8)});
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  "k.py:13:35: unsupported construct 'tl.associative_scan with combine_fn _mul': tad "
                  "differentiates a scan whose combine_fn returns the sum of its two arguments (a cumsum); for "
                  "another one, call it from a @triton.jit helper and give that helper a differentiable "
                  "definition in TAD_DIFFERENTIATE_AS = {helper: definition}");
    }
    // A linear recurrence's scan of a tuple of tiles is refused for its combine_fn too (it used to
    // be refused as "value of this kind in arithmetic").
    const char *tuple_scan = R"(import triton
import triton.language as tl


@triton.jit
def _recur(a1, x1, a2, x2):
    return a1 * a2, a2 * x1 + x2


@triton.jit
def k(A, X, B: tl.constexpr):
    a = tl.load(A + tl.arange(0, B))
    x = tl.load(X + tl.arange(0, B))
    _, h = tl.associative_scan((a, x), 0, _recur)
    tl.store(X + tl.arange(0, B), h)
)";
    try {
        lower(tuple_scan, {tensor("A"), tensor("X"), integer("B", 8)});
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  "k.py:14:12: unsupported construct 'tl.associative_scan with combine_fn _recur': tad "
                  "differentiates a scan whose combine_fn returns the sum of its two arguments (a cumsum); for "
                  "another one, call it from a @triton.jit helper and give that helper a differentiable "
                  "definition in TAD_DIFFERENTIATE_AS = {helper: definition}");
    }
}

TEST(Lower, LauncherRefusesOtherValuesOfASpecializedConstexpr) {
    std::string src = std::string(kBranch) + R"(

import tad


@tad.autodiff(grad_inputs=("x",))
def f(x):
    y = x.new_empty(x.shape)
    k[(1,)](x, y, SCALE=1, B=16)
    return y
)";
    frontend::KernelFile kf = frontend::analyze(frontend::parse_source("k.py", src));
    Json trace = Json::parse(R"({"stub": "f", "inputs": [{"name": "x", "index": 0, "kind": "tensor", "dtype": "float32",
        "shape": [16], "stride": [1]}], "outputs": [{"index": 0, "kind": "tensor", "dtype": "float32", "shape": [16],
        "stride": [1]}], "temps": [], "launches": [{"kernel": "k", "grid": [1, 1, 1], "options": {}, "args": [
        {"name": "X", "kind": "tensor", "ref": {"input": 0}, "offset": 0, "dtype": "float32"},
        {"name": "Y", "kind": "tensor", "ref": {"output": 0}, "offset": 0, "dtype": "float32"},
        {"name": "SCALE", "kind": "int", "value": 1}, {"name": "B", "kind": "int", "value": 16}]}]})",
                             "trace");
    std::string py = emit_backward_module(kf, {trace});
    EXPECT_NE(py.find("    if a[\"SCALE\"] == 1:\n        d_x = "), std::string::npos) << py;
    EXPECT_NE(py.find("k_bwd_SCALE_1[launches[0].grid]("), std::string::npos) << py;
    EXPECT_NE(py.find("    else:\n        raise RuntimeError(f\"no backward of k was generated for "
                      "SCALE={a['SCALE']!r} (its backward is specialized on SCALE)"),
              std::string::npos)
        << py;
}

TEST(Lower, LauncherLocalsNeverShadowStubParameters) {
    // A stub whose parameters are named like the launcher's locals.
    std::string src = R"(import torch
import triton
import triton.language as tl

import tad


@triton.jit
def k(A, OUT, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(OUT + offs, tl.exp(tl.load(A + offs)))


@tad.autodiff(grad_inputs=("a",))
def f(a, launch, out, grads):
    k[(1,)](a, out, B=16)
    return out
)";
    frontend::KernelFile kf = frontend::analyze(frontend::parse_source("k.py", src));
    Json trace = Json::parse(R"({"stub": "f", "inputs": [
        {"name": "a", "index": 0, "kind": "tensor", "dtype": "float32", "shape": [16], "stride": [1]},
        {"name": "launch", "index": 1, "kind": "none"}, {"name": "out", "index": 2, "kind": "tensor",
        "dtype": "float32", "shape": [16], "stride": [1]}, {"name": "grads", "index": 3, "kind": "none"}],
        "outputs": [{"index": 0, "kind": "tensor", "dtype": "float32", "shape": [16], "stride": [1]}],
        "temps": [], "launches": [{"kernel": "k", "grid": [1, 1, 1], "options": {}, "args": [
        {"name": "A", "kind": "tensor", "ref": {"input": 0}, "offset": 0, "dtype": "float32"},
        {"name": "OUT", "kind": "tensor", "ref": {"output": 0}, "offset": 0, "dtype": "float32"},
        {"name": "B", "kind": "int", "value": 16}]}]})",
                             "trace");
    std::string py = emit_backward_module(kf, {trace});
    EXPECT_NE(py.find("def f_backward(launches, temps, a, launch, out, grads, outs, out_layouts, grads_):\n"),
              std::string::npos)
        << py;
    EXPECT_NE(py.find("    a_ = launches[0].args\n"), std::string::npos) << py;
    EXPECT_NE(py.find("        for launch_ in launches:\n"), std::string::npos) << py;
    EXPECT_NE(py.find("    def forward(ctx, a, launch, out, grads):\n        with _capturing(_SNAPSHOTS) as "
                      "launches:\n            out_ = f(a, launch, out, grads)"),
              std::string::npos)
        << py;
    EXPECT_EQ(py.find("\n    a = "), std::string::npos) << py;
}

TEST(Lower, ModuleConstexprGlobalsAndRandomNumbers) {
    const char *src = R"(import triton
import triton.language as tl

_SCALE = tl.constexpr(0.5)


@triton.jit
def k(X, Y, seed, B: tl.constexpr):
    offs = tl.arange(0, B)
    keep = tl.rand(seed, offs) > 0.25
    tl.store(Y + offs, tl.where(keep, tl.load(X + offs) * _SCALE, 0.0))
)";
    frontend::ArgBinding seed;
    seed.kind = frontend::ArgBinding::Int;
    seed.name = "seed";
    seed.ival = 7;
    ir::Function f = lower(src, {tensor("X"), tensor("Y"), seed, integer("B", 8)});
    std::string text = ir::print(f);
    EXPECT_NE(text.find("const 0.5 : f32"), std::string::npos) << text;
    EXPECT_NE(text.find("= rand %"), std::string::npos) << text;
    // The generator is deterministic and uniform enough for a mask: the same offsets give the same lanes.
    interp::Memory m;
    int x = m.add({"x", ir::DType::F32, std::vector<double>(8, 2.0)});
    int y1 = m.add({"y", ir::DType::F32, std::vector<double>(8, NAN)}),
        y2 = m.add({"y", ir::DType::F32, std::vector<double>(8, NAN)});
    interp::run(f, {interp::ArgValue::pointer(x), interp::ArgValue::pointer(y1), interp::ArgValue::integer(7)},
                {1, 1, 1}, m);
    interp::run(f, {interp::ArgValue::pointer(x), interp::ArgValue::pointer(y2), interp::ArgValue::integer(7)},
                {1, 1, 1}, m);
    int kept = 0;
    for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(m.at(y1).data[i], m.at(y2).data[i]);
        EXPECT_TRUE(m.at(y1).data[i] == 0.0 || m.at(y1).data[i] == 1.0) << m.at(y1).data[i];
        kept += m.at(y1).data[i] == 1.0;
    }
    EXPECT_GT(kept, 0);
    EXPECT_LT(kept, 8);
}

// tl.randn: the interpreter's stream is deterministic and standard normal (Box-Muller).
TEST(Lower, RandnGivesStandardNormalLanes) {
    const char *src = R"(import triton
import triton.language as tl


@triton.jit
def k(Y, seed, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(Y + offs, tl.randn(seed, offs))
)";
    frontend::ArgBinding seed;
    seed.kind = frontend::ArgBinding::Int;
    seed.name = "seed";
    seed.ival = 3;
    ir::Function f = lower(src, {tensor("Y"), seed, integer("B", 4096)});
    EXPECT_NE(ir::print(f).find("= randn %"), std::string::npos) << ir::print(f);
    interp::Memory m;
    int y1 = m.add({"y", ir::DType::F32, std::vector<double>(4096, NAN)}),
        y2 = m.add({"y", ir::DType::F32, std::vector<double>(4096, NAN)});
    interp::run(f, {interp::ArgValue::pointer(y1), interp::ArgValue::integer(3)}, {1, 1, 1}, m);
    interp::run(f, {interp::ArgValue::pointer(y2), interp::ArgValue::integer(3)}, {1, 1, 1}, m);
    double sum = 0, squares = 0;
    for (int i = 0; i < 4096; ++i) {
        EXPECT_EQ(m.at(y1).data[i], m.at(y2).data[i]);
        sum += m.at(y1).data[i];
        squares += m.at(y1).data[i] * m.at(y1).data[i];
    }
    // 4096 samples: the mean's standard error is 1/64, the variance's about 0.022.
    EXPECT_LT(std::fabs(sum / 4096), 0.08);
    EXPECT_LT(std::fabs(squares / 4096 - 1.0), 0.12);
}

TEST(Lower, CompositeMathLowersToRuleTableOps) {
    const char *src = R"(import triton
import triton.language as tl


@triton.jit
def k(X, Y, B: tl.constexpr):
    offs = tl.arange(0, B)
    x = tl.load(X + offs)
    a = tl.fma(x, x, 1.0)
    b = tl.clamp(x, -0.5, 0.5)
    c = tl.fdiv(a, 2.0) + tl.sqrt_rn(a)
    d = tl.softmax(x[None, :])
    tl.store(Y + offs, a + b + c + tl.sum(d, axis=0))
)";
    ir::Function f = lower(src, {tensor("X"), tensor("Y"), integer("B", 4)});
    interp::Memory m;
    std::vector<double> xs = {-1.0, -0.25, 0.3, 2.0};
    int x = m.add({"x", ir::DType::F32, xs});
    int y = m.add({"y", ir::DType::F32, std::vector<double>(4, NAN)});
    interp::run(f, {interp::ArgValue::pointer(x), interp::ArgValue::pointer(y)}, {1, 1, 1}, m);
    double z = 0;
    for (double v : xs) z += std::exp(v - 2.0);
    for (size_t i = 0; i < xs.size(); ++i) {
        double a = xs[i] * xs[i] + 1.0, b = std::min(std::max(xs[i], -0.5), 0.5);
        double want = a + b + a / 2.0 + std::sqrt(a) + std::exp(xs[i] - 2.0) / z;
        EXPECT_NEAR(m.at(y).data[i], want, 1e-12) << i;
    }
}

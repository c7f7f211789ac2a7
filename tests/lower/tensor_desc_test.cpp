// Device-side tensor descriptors (tl.make_tensor_descriptor): each access lowers to a pointer tile
// masked on every dim, run on the interpreter (which faults on any unmasked out-of-bounds lane), and
// the forms tad refuses, by their exact diagnostics; host-side TensorDescriptor parameters bound as
// their base pointer and scalars.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/kernel_file.h"
#include "frontend/lower.h"
#include "frontend/parser.h"
#include "interp/interp.h"
#include "lower_source.h"
#include "support/error.h"

using namespace tad;

namespace {

using K = frontend::ArgBinding;

using tad::test::arg;
using tad::test::lower_error;

ir::Function lower(const std::string &body, const std::vector<frontend::ArgBinding> &args) {
    return tad::test::lower_body(body, args);
}

const std::vector<frontend::ArgBinding> kXYn = {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n", 3),
                                                arg(K::Int, "m", 3)};

// `def k(X, Y, n, m, ...)` with the given body lines after the descriptors xd, yd over n x m.
std::string kernel(const std::string &body) {
    return "@triton.jit\ndef k(X, Y, n, m, B0: tl.constexpr, B1: tl.constexpr):\n"
           "    pid = tl.program_id(0)\n"
           "    xd = tl.make_tensor_descriptor(X, shape=[n, m], strides=[m, 1], block_shape=[B0, B1])\n"
           "    yd = tl.make_tensor_descriptor(Y, [n, m], [m, 1], [B0, B1])\n" +
           body;
}

std::vector<frontend::ArgBinding> blocks(int64_t b0, int64_t b1) {
    std::vector<frontend::ArgBinding> a = kXYn;
    a.push_back(arg(K::Int, "B0", b0));
    a.push_back(arg(K::Int, "B1", b1));
    return a;
}

// Runs k(X, Y, n=3, m=3) over `programs` programs on a 3 x 3 X holding 1..9 and Y holding -9.
std::vector<double> run3x3(const ir::Function &f, int64_t programs) {
    interp::Memory mem;
    int xb = mem.add({"x", ir::DType::F32, {1, 2, 3, 4, 5, 6, 7, 8, 9}});
    int yb = mem.add({"y", ir::DType::F32, std::vector<double>(9, -9.0)});
    interp::run(f,
                {interp::ArgValue::pointer(xb), interp::ArgValue::pointer(yb), interp::ArgValue::integer(3),
                 interp::ArgValue::integer(3)},
                {programs, 1, 1}, mem);
    return mem.at(yb).data;
}

}  // namespace

// Blocks of 2 x 4 over a 3 x 3 tensor: the 4th column and the 4th row are out of bounds. Reads
// there give zero (the row sums below would be NaN otherwise: the interpreter's masked lanes without
// `other` are NaN), writes there are dropped (the interpreter would fault on them).
TEST(TensorDesc, LoadPadsWithZeroAndStoreDropsOutOfBounds) {
    ir::Function f = lower(kernel("    x = xd.load([pid * B0, 0])\n"
                                  "    yd.store([pid * B0, 0], x + tl.sum(x, axis=1)[:, None])\n"),
                           blocks(2, 4));
    EXPECT_EQ(ir::verify(f), "");
    int loads = 0, stores = 0;
    for (const ir::Op &op : f.ops) {
        if (op.kind == ir::OpKind::Load) {
            ++loads;
            EXPECT_TRUE(op.has_mask && op.operands.size() == 3) << "a descriptor load has a mask and other=0:\n"
                                                                << ir::print(f);
        }
        if (op.kind == ir::OpKind::Store) {
            ++stores;
            EXPECT_TRUE(op.has_mask) << ir::print(f);
        }
    }
    EXPECT_EQ(loads, 1);
    EXPECT_EQ(stores, 1);
    EXPECT_EQ(run3x3(f, 2), (std::vector<double>{7, 8, 9, 19, 20, 21, 31, 32, 33}));
}

// padding_option="nan" fills out-of-bounds lanes with NaN; offsets may be negative (TMA treats
// coordinates below zero as out of bounds too).
TEST(TensorDesc, NanPaddingAndNegativeOffsets) {
    ir::Function f = lower(
        "@triton.jit\ndef k(X, Y, n, m, B0: tl.constexpr, B1: tl.constexpr):\n"
        "    xd = tl.make_tensor_descriptor(X, [n, m], [m, 1], [B0, B1], padding_option=\"nan\")\n"
        "    yd = tl.make_tensor_descriptor(Y, [n, m], [m, 1], [B0, B1])\n"
        "    yd.store([0, 0], xd.load([-1, 0]))\n",
        blocks(4, 4));
    std::vector<double> y = run3x3(f, 1);
    EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]) && std::isnan(y[2])) << y[0];
    EXPECT_EQ(std::vector<double>(y.begin() + 3, y.end()), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

// A 1-D descriptor with atomic_add: overlapping windows accumulate, lanes past n are dropped; the
// descriptor's dtype and block_shape attributes are compile-time values.
TEST(TensorDesc, AtomicAddAccumulatesInBoundsLanes) {
    const char *src = R"(@triton.jit
def k(X, Y, n, B: tl.constexpr):
    d = tl.make_tensor_descriptor(Y, shape=[n], strides=[1], block_shape=[B])
    v = tl.load(X + tl.arange(0, d.block_shape[0]))
    d.atomic_add([tl.program_id(0) * 2], v.to(d.dtype))
)";
    ir::Function f = lower(src, {arg(K::Tensor, "X"), arg(K::Tensor, "Y"), arg(K::Int, "n", 5), arg(K::Int, "B", 4)});
    interp::Memory mem;
    int xb = mem.add({"x", ir::DType::F32, {1, 2, 3, 4}});
    int yb = mem.add({"y", ir::DType::F32, std::vector<double>(5, 0.0)});
    interp::run(f, {interp::ArgValue::pointer(xb), interp::ArgValue::pointer(yb), interp::ArgValue::integer(5)},
                {3, 1, 1}, mem);
    EXPECT_EQ(mem.at(yb).data, (std::vector<double>{1, 2, 4, 6, 4}));
}

// Descriptors cross helper calls, are read in a loop at offsets from the loop counter (nothing is
// carried for them) and keep their accesses under a run-time `if` predicated.
TEST(TensorDesc, HelpersLoopsAndRunTimeIfs) {
    const char *src = R"(@triton.jit
def _tile(d, r, c):
    return d.load([r, c])


@triton.jit
def k(X, Y, n, m, B0: tl.constexpr, B1: tl.constexpr):
    pid = tl.program_id(0)
    xd = tl.make_tensor_descriptor(X, [n, m], [m, 1], [B0, B1])
    yd = tl.make_tensor_descriptor(Y, [n, m], [m, 1], [B0, B1])
    acc = tl.zeros((B0, B1), dtype=tl.float32)
    for c in range(0, m, B1):
        acc += _tile(xd, pid * B0, c)
    if pid < 1:
        yd.store([pid * B0, 0], acc * 2.0)
)";
    ir::Function f = lower(src, blocks(1, 2));
    EXPECT_EQ(ir::verify(f), "");
    int loop_args = 0;
    for (const ir::Op &op : f.ops) loop_args += op.kind == ir::OpKind::LoopArg;
    EXPECT_EQ(loop_args, 1) << "only acc is carried:\n" << ir::print(f);
    // Program 0 sums row 0's 1 x 2 blocks, [1, 2] + [3, 0 (padding)], into columns 0..1; programs 1
    // and 2 write nothing.
    EXPECT_EQ(run3x3(f, 3), (std::vector<double>{8, 4, -9, -9, -9, -9, -9, -9, -9}));
}

TEST(TensorDesc, RefusedFormsNameTheConstruct) {
    auto b = blocks(2, 4);
    EXPECT_EQ(lower_error("@triton.jit\ndef k(X, Y, n, m, B0: tl.constexpr, B1: tl.constexpr):\n"
                          "    xd = tl.make_tensor_descriptor(X, [n, m], [1, 2], [B0, B1])\n",
                          b),
              "k.py:7:10: unsupported construct 'tl.make_tensor_descriptor': the last stride must be 1 (Triton "
              "requires the last dim to "
              "be contiguous)");
    EXPECT_EQ(lower_error("@triton.jit\ndef k(X, Y, n, m, B0: tl.constexpr, B1: tl.constexpr):\n"
                          "    xd = tl.make_tensor_descriptor(X, [n, m], [m, 1], [B0])\n",
                          b),
              "k.py:7:10: unsupported construct 'tl.make_tensor_descriptor': shape, strides and block_shape must have "
              "the same length");
    EXPECT_EQ(lower_error("@triton.jit\ndef k(X, Y, n, m, B0: tl.constexpr, B1: tl.constexpr):\n"
                          "    xd = tl.make_tensor_descriptor(X, [n, m], [m, 1], [B0, B1], padding_option=\"edge\")\n",
                          b),
              "k.py:7:10: unsupported construct 'tl.make_tensor_descriptor': padding_option must be 'zero' or 'nan'");
    EXPECT_EQ(lower_error(kernel("    x = xd.load([0])\n"), b),
              "k.py:10:9: unsupported construct 'desc.load': needs one offset per dim of the descriptor (2)");
    EXPECT_EQ(lower_error(kernel("    x = xd.load([tl.arange(0, B0), 0])\n"), b),
              "k.py:10:9: unsupported construct 'desc.load': offsets must be integer scalars");
    EXPECT_EQ(
        lower_error(kernel("    yd.store([0, 0], 1.0)\n"), b),
        "k.py:10:5: unsupported construct 'desc.store': the value must be a tile of the descriptor's block shape");
    EXPECT_EQ(lower_error(kernel("    yd.atomic_max([0, 0], xd.load([0, 0]))\n"), b),
              "k.py:10:5: unsupported construct 'desc.atomic_max': only load, store and atomic_add of a tensor "
              "descriptor are differentiable");
    EXPECT_EQ(lower_error(kernel("    x = xd.gather(tl.arange(0, B0), 0)\n"), b),
              "k.py:10:9: unsupported construct 'desc.gather': row-gathered descriptor access is not lowered yet; use "
              "desc.load / "
              "desc.store per tile");
    EXPECT_EQ(lower_error(kernel("    x = tl.load(xd)\n"), b),
              "k.py:10:9: unsupported construct 'tl.load of a tensor descriptor': read it with desc.load(offsets)");
    EXPECT_EQ(lower_error(kernel("    n2 = xd.ndim\n"), b),
              "k.py:10:10: unsupported construct 'tensor descriptor attribute '.ndim''");
    EXPECT_EQ(lower_error(kernel("    for i in range(0, n):\n"
                                 "        xd = tl.make_tensor_descriptor(X, [n, m], [m, 1], [B0, B1])\n"),
                          b),
              "k.py:10:5: unsupported construct 'tensor descriptor 'xd' rebuilt in a loop': create it once before the "
              "loop and give each "
              "access its offsets");
    EXPECT_EQ(lower_error(kernel("    if pid < n:\n"
                                 "        xd = tl.make_tensor_descriptor(Y, [n, m], [m, 1], [B0, B1])\n"
                                 "    yd.store([0, 0], xd.load([0, 0]))\n"),
                          b),
              "k.py:10:5: unsupported construct 'if': tensor descriptor 'xd' is rebuilt in a branch; create it once "
              "before the if and "
              "choose the offsets instead");
}

namespace {

// A forward file whose kernel takes host-side descriptors xd, yd (n x m, blocks B0 x B1).
frontend::KernelFile host_file(const std::string &extra_param = "") {
    std::string src =
        "import triton\nimport triton.language as tl\nimport tad\n\n\n"
        "@triton.jit\ndef k(xd, yd" +
        extra_param +
        "):\n"
        "    pid = tl.program_id(0)\n"
        "    x = xd.load([pid * xd.block_shape[0], 0])\n"
        "    yd.store([pid * xd.block_shape[0], 0], x + tl.sum(x, axis=1)[:, None])\n\n\n"
        "@tad.autodiff(grad_inputs=(\"x\",))\ndef stub(x):\n    k[(1,)](x, x)\n";
    return frontend::analyze(frontend::parse_source("k.py", src));
}

std::vector<frontend::ArgBinding> host_bindings(int64_t last_stride) {
    std::vector<frontend::ArgBinding> out;
    for (const char *name : {"xd", "yd"}) {
        frontend::ArgBinding b = arg(K::Tensor, name);
        b.desc_block = {2, 4};
        out.push_back(b);
        for (const frontend::ArgBinding &s : frontend::tensor_desc_scalars(name, {3, 3}, {3, last_stride}, {2, 4}))
            out.push_back(s);
    }
    return out;
}

}  // namespace

// The kernel of LoadPadsWithZeroAndStoreDropsOutOfBounds with the descriptors built on the host:
// the same result, with the shapes and strides as run-time parameters and the block shape as
// constexprs named after the parameter.
TEST(TensorDesc, HostDescriptorParametersBindBasePointerAndScalars) {
    frontend::KernelFile kf = host_file();
    ir::Function f = frontend::lower_kernel(kf, "k", host_bindings(1));
    std::vector<std::string> params;
    for (const ir::Param &p : f.params) params.push_back(p.name);
    EXPECT_EQ(params, (std::vector<std::string>{"xd", "xd_shape0", "xd_shape1", "xd_stride0", "yd", "yd_shape0",
                                                "yd_shape1", "yd_stride0"}));
    std::vector<std::string> constexprs;
    for (const ir::Constexpr &c : f.constexprs) constexprs.push_back(c.name + "=" + c.literal);
    EXPECT_EQ(constexprs, (std::vector<std::string>{"xd_block0=2", "xd_block1=4", "yd_block0=2", "yd_block1=4"}));
    interp::Memory mem;
    int xb = mem.add({"x", ir::DType::F32, {1, 2, 3, 4, 5, 6, 7, 8, 9}});
    int yb = mem.add({"y", ir::DType::F32, std::vector<double>(9, -9.0)});
    auto i = [](int64_t v) { return interp::ArgValue::integer(v); };
    interp::run(f, {interp::ArgValue::pointer(xb), i(3), i(3), i(3), interp::ArgValue::pointer(yb), i(3), i(3), i(3)},
                {2, 1, 1}, mem);
    EXPECT_EQ(mem.at(yb).data, (std::vector<double>{7, 8, 9, 19, 20, 21, 31, 32, 33}));
}

TEST(TensorDesc, RefusedHostDescriptors) {
    try {
        frontend::lower_kernel(host_file(), "k", host_bindings(2));
        FAIL() << "a last stride of 2 was accepted";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  "k.py:7:7: unsupported construct 'TensorDescriptor argument 'xd'': the last dim must be contiguous "
                  "(stride 1)");
    }
    try {
        std::vector<frontend::ArgBinding> b = host_bindings(1);
        b.push_back(arg(K::Int, "xd_shape0", 3));
        frontend::lower_kernel(host_file(", xd_shape0"), "k", b);
        FAIL() << "a parameter named like a descriptor's scalar was accepted";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  "k.py:7:7: unsupported construct 'TensorDescriptor argument 'xd'': kernel parameter 'xd_shape0' "
                  "takes the name tad gives "
                  "its shape");
    }
}

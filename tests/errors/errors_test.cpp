// Bad input: every diagnostic asserted by its exact text, with file:line:col where there is one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "../common/error_of.h"
#include "driver/session.h"
#include "store/store.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/json.h"

using namespace tad;
using namespace tad::driver;
using tad::testing::error_of;

namespace {

const char *kPython = "/usr/bin/python3";

bool torch_available() {
    return std::system((std::string(kPython) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
}

const char *kKernel = R"(import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _double(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(Y + offs, 2.0 * tl.load(X + offs, mask=mask), mask=mask)
)";

const char *kStub = R"(

@tad.autodiff(grad_inputs=("x",))
def double(x):
    y = torch.empty_like(x)
    _double[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y


SWEEP = [{"n": 100}]


def make_args(dims):
    return (torch.randn(dims["n"], device=dims.get("device", "cuda")),), {}
)";

class Errors : public ::testing::Test {
protected:
    fs::TempDir dir;

    std::string write(const std::string &name, const std::string &text) {
        std::string p = fs::join(dir.path(), name);
        std::ofstream(p) << text;
        return p;
    }

    // The CPU tier's report on the session's current candidate; it must fail.
    Json failing_cpu_verify(Session &s) {
        VerifyOptions v;
        v.cpu = true;
        bool passed = true;
        Json report = Json::parse(s.verify(v, &passed), "report");
        EXPECT_FALSE(passed);
        return report;
    }

    // The same on the forward file at `path`, generated first (with `g`).
    Json failing_cpu_verify(Session &s, const std::string &path, const GenerateOptions &g = GenerateOptions{}) {
        s.load_forward(path, std::nullopt);
        s.generate(g);
        return failing_cpu_verify(s);
    }

    // A session whose worker imports the given fake packages (name -> __init__.py) before the real ones.
    Session session_with_fakes(const std::vector<std::pair<std::string, std::string>> &packages) {
        std::string fake = fs::join(dir.path(), "fake");
        for (const auto &[name, init] : packages) {
            fs::make_dirs(fs::join(fake, name));
            write("fake/" + name + "/__init__.py", init);
        }
        std::string py = write("python", "#!/bin/sh\nPYTHONPATH=" + fake + " exec " + kPython + " \"$@\"\n");
        if (std::system(("chmod +x " + py).c_str()) != 0) ADD_FAILURE() << "chmod failed";
        SessionOptions o;
        o.work_dir = fs::join(dir.path(), "work");
        o.python = py;
        return Session(o);
    }

    Session session() {
        SessionOptions o;
        o.work_dir = fs::join(dir.path(), "work");
        o.python = kPython;
        return Session(o);
    }
};

TEST_F(Errors, MissingFile) {
    Session s = session();
    std::string p = fs::join(dir.path(), "absent.py");
    auto [status, msg] = error_of([&] { s.load_forward(p, std::nullopt); });
    EXPECT_EQ(status, TAD_ERR_IO);
    EXPECT_EQ(msg, p + ": cannot read file: No such file or directory");
}

TEST_F(Errors, SyntaxError) {
    Session s = session();
    std::string p = write("bad.py", "import triton\n\nx = (1,\ny = 2\n");
    auto [status, msg] = error_of([&] { s.load_forward(p, std::nullopt); });
    EXPECT_EQ(status, TAD_ERR_SYNTAX);
    EXPECT_EQ(msg.rfind(p + ":3:5: syntax error: ", 0), 0u) << msg;
}

TEST_F(Errors, NoJitKernel) {
    Session s = session();
    std::string p = write("plain.py", "import torch\n\ndef f(x):\n    return x\n");
    auto [status, msg] = error_of([&] { s.load_forward(p, std::nullopt); });
    EXPECT_EQ(status, TAD_ERR_NO_KERNEL);
    EXPECT_EQ(msg, p + ": no @triton.jit kernel found");
}

TEST_F(Errors, NoStub) {
    Session s = session();
    std::string p = write("nostub.py", kKernel);
    auto [status, msg] = error_of([&] { s.load_forward(p, std::nullopt); });
    EXPECT_EQ(status, TAD_ERR_NO_KERNEL);
    EXPECT_EQ(msg, p + ": no stub marked @tad.autodiff(grad_inputs=...) found");
}

TEST_F(Errors, StubLaunchingNoKernel) {
    Session s = session();
    std::string p = write("nolaunch.py", std::string(kKernel) + R"(

@tad.autodiff(grad_inputs=("x",))
def double(x):
    return 2 * x
)");
    auto [status, msg] = error_of([&] { s.load_forward(p, std::nullopt); });
    EXPECT_EQ(status, TAD_ERR_NO_KERNEL);
    EXPECT_EQ(msg, p + ":16:1: stub 'double' launches no @triton.jit kernel (tad looks for K[grid](...) in the "
                       "stub and in the functions of this file it calls)");
}

// A class's kernel named like another @triton.jit function: the trace could not tell them apart,
// and the wrong one would be differentiated.
TEST_F(Errors, ClassKernelNamedLikeAnother) {
    Session s = session();
    std::string p = write("clash.py", std::string(kKernel) + R"(

class Ops:
    @staticmethod
    @triton.jit
    def _double(X, Y, n, BLOCK: tl.constexpr):
        pass
)" + kStub);
    auto [status, msg] = error_of([&] { s.load_forward(p, std::nullopt); });
    EXPECT_EQ(status, TAD_ERR_UNSUPPORTED);
    EXPECT_EQ(msg, p + ":9:1: unsupported construct 'two @triton.jit functions named '_double'': one is in a class, "
                       "and tad tells kernels apart by their function's name; rename one");
}

// tad trusts its residual buffers (TAD_SAVED_...) to be float32 on every launch and reads a compared
// value back from them; a user's buffer of that name may be narrower: refused, not trusted.
TEST_F(Errors, KernelParameterWithTadsResidualPrefix) {
    Session s = session();
    std::string kernel = kKernel;
    kernel.replace(kernel.find("def _double(X, Y, n,"), 20, "def _double(X, Y, n, TAD_SAVED_S,");
    std::string p = write("reserved.py", kernel + kStub);
    auto [status, msg] = error_of([&] { s.load_forward(p, std::nullopt); });
    EXPECT_EQ(status, TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(msg, p + ":9:22: kernel '_double' has a parameter 'TAD_SAVED_S': names starting with TAD_SAVED_ are "
                       "tad's (the buffers of the residuals it saves); rename it");
}

TEST_F(Errors, GradInputsNamingUnknownArgument) {
    Session s = session();
    std::string stub = kStub;
    stub.replace(stub.find("(\"x\",)"), 6, "(\"x\", \"scale\")");
    std::string p = write("unknown.py", std::string(kKernel) + stub);
    auto [status, msg] = error_of([&] { s.load_forward(p, std::nullopt); });
    EXPECT_EQ(status, TAD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(msg, p + ":15:33: grad_inputs names 'scale', which is not a parameter of stub 'double' (parameters: x)");
}

TEST_F(Errors, UnsupportedConstruct) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    Session s = session();
    std::string kernel = kKernel;
    kernel.replace(kernel.find("    tl.store("), 0, "    while n > 0:\n        n = n - 1\n");
    std::string p = write("loop.py", kernel + kStub);
    s.load_forward(p, std::nullopt);
    auto [status, msg] = error_of([&] { s.generate(GenerateOptions{}); });
    EXPECT_EQ(status, TAD_ERR_UNSUPPORTED);
    EXPECT_EQ(msg, p + ":12:5: unsupported construct 'while loop': loops with a data-dependent trip count are not "
                       "supported yet; use for ... in range(...)");
}

// tl.max(a, b) with a tile b: the second argument is the axis (Triton refuses a tile there); the
// elementwise maximum is tl.maximum. It used to crash tad (or reduce along axis 0).
TEST_F(Errors, ReductionWithATileAsItsAxis) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    Session s = session();
    std::string kernel = kKernel;
    kernel.replace(kernel.find("2.0 * tl.load(X + offs, mask=mask)"), 34,
                   "tl.max(tl.load(X + offs, mask=mask), 2.0 * tl.load(X + offs, mask=mask))");
    std::string p = write("max.py", kernel + kStub);
    s.load_forward(p, std::nullopt);
    auto [status, msg] = error_of([&] { s.generate(GenerateOptions{}); });
    EXPECT_EQ(status, TAD_ERR_UNSUPPORTED);
    EXPECT_EQ(msg, p + ":12:24: unsupported construct 'tl.max with a tile as its axis': the second argument of tl.max "
                       "is the axis, a constexpr integer; for the elementwise maximum of two tiles use "
                       "tl.maximum(a, b)");
}

// Inline assembly has no derivative rule: the message says how to give tad one.
TEST_F(Errors, InlineAssemblyWithoutADefinition) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    Session s = session();
    std::string kernel = kKernel;
    kernel.replace(kernel.find("2.0 * tl.load(X + offs, mask=mask)"), 34,
                   "tl.inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,r\", [tl.load(X + offs, mask=mask)], "
                   "dtype=tl.float32, is_pure=True, pack=1)");
    std::string p = write("asm.py", kernel + kStub);
    s.load_forward(p, std::nullopt);
    auto [status, msg] = error_of([&] { s.generate(GenerateOptions{}); });
    EXPECT_EQ(status, TAD_ERR_UNSUPPORTED);
    EXPECT_EQ(msg, p + ":12:24: unsupported construct 'tl.inline_asm_elementwise': tad cannot differentiate inline "
                       "assembly; call it from a @triton.jit helper and give that helper a differentiable definition "
                       "in TAD_DIFFERENTIATE_AS = {helper: definition}");
}

// A kernel reading a complex stub input through a real view: the module's gradient buffers follow
// the complex tensor, so it is refused, naming both. It used to generate, then fail in the CPU tier
// with "JSON object has no member 'input:1'".
TEST_F(Errors, ComplexInputThroughARealView) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    Session s = session();
    std::string p = write("complex.py", std::string(kKernel) + R"(

@tad.autodiff(grad_inputs=("x", "z"))
def double(x, z):
    y = torch.empty_like(x)
    _double[(1,)](torch.view_as_real(z), y, x.numel(), BLOCK=64)
    return y


SWEEP = [{"n": 32}]


def make_args(dims):
    d = dims.get("device", "cuda")
    return (torch.randn(dims["n"], device=d), torch.randn(dims["n"] // 2, dtype=torch.complex64, device=d)), {}
)");
    s.load_forward(p, std::nullopt);
    auto [status, msg] = error_of([&] { s.generate(GenerateOptions{}); });
    EXPECT_EQ(status, TAD_ERR_UNSUPPORTED);
    EXPECT_EQ(msg, p + ": stub 'double' passes kernel '_double' argument 'X' a real view of its complex64 input "
                       "'z'; tad differentiates real tensors only (pass the stub real tensors, e.g. "
                       "torch.view_as_real of the complex one)");
}

// Two returned views of one storage would need their cotangents summed into one gradient; the
// module used to give a wrong gradient (the second view's cotangent was dropped).
TEST_F(Errors, TwoOutputsViewingOneStorage) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    Session s = session();
    std::string stub = kStub;
    stub.replace(stub.find("    return y\n"), 13, "    return y, y.view(10, 10)\n");
    std::string p = write("views.py", std::string(kKernel) + stub);
    s.load_forward(p, std::nullopt);
    auto [status, msg] = error_of([&] { s.generate(GenerateOptions{}); });
    EXPECT_EQ(status, TAD_ERR_UNSUPPORTED);
    EXPECT_EQ(msg, p + ":16:1: stub 'double' returns output 1, a view of the storage of output 0; tad gives each "
                       "storage one gradient, so return one view of it");
}

// A masked load without other= whose masked-off lanes reach an output (through a reduction): the
// CPU tier names the load instead of saying that the gradient is not finite.
TEST_F(Errors, MaskedLoadWithoutOtherReachingAnOutput) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    Session s = session();
    std::string kernel = kKernel;
    kernel.replace(kernel.find("2.0 * tl.load(X + offs, mask=mask)"), 34,
                   "tl.sum(tl.load(X + offs, mask=mask), axis=0) * tl.load(X + offs, mask=mask)");
    std::string p = write("undefined.py", kernel + kStub);
    Json report = failing_cpu_verify(s, p);
    JsonRef r = report.at("results")[0];
    EXPECT_EQ(r.at("message").str().rfind("gradient of 'x': " + p +
                                              ":12:31: the masked-off lanes of this tl.load, which has no other=, "
                                              "reach output 0 (Triton leaves them undefined, e.g. in a reduction); "
                                              "give the load other= (e.g. other=0.0)",
                                          0),
              0u)
        << r.at("message").str();
}

// A gradient computed as NaN is told apart from one never written (the oracle used to say "1 gradient
// elements were never written"). The NaN is tad's: the -inf of the masked-off lanes times their zero
// adjoint, in the temperature's sum (docs/compiler.md, masked lanes and 0 * inf).
TEST_F(Errors, GradientComputedAsNaNIsNotCalledUnwritten) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    Session s = session();
    std::string p = write("temperature.py", R"(import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _k(X, Temp, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    z = tl.load(X + row * N + cols, mask=m, other=float("-inf")) / tl.load(Temp)
    e = tl.exp(z - tl.max(z, axis=0))
    tl.store(Y + row * N + cols, e / tl.sum(e, axis=0), mask=m)


@tad.autodiff(grad_inputs=("x", "temp"))
def softmax_t(x, temp):
    y = torch.empty_like(x)
    _k[(x.shape[0],)](x, temp, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return y


SWEEP = [{"M": 3, "N": 20}]


def make_args(dims):
    x = torch.randn(dims["M"], dims["N"], dtype=getattr(torch, dims["dtype"]), device=dims["device"])
    return (x, torch.tensor(1.5, dtype=x.dtype, device=x.device)), {}
)");
    Json report = failing_cpu_verify(s, p);
    const std::string msg = report.at("results")[0].at("message").str();
    EXPECT_EQ(
        msg.rfind("gradient of 'temp': the gradient or the finite differences of the forward are not finite; ", 0), 0u)
        << msg;
    EXPECT_NE(msg.find("whole stub: gradient of 'temp': the gradient or the finite differences of the stub are not "
                       "finite"),
              std::string::npos)
        << msg;
}

// A stub choosing its kernel by shape, generated from one entry only (given dims, so the SWEEP is
// not traced): the entry that launches another kernel than the module was generated for is an
// error naming both sequences (it used to be "no @triton.jit function named '_b_bwd'"). Generated
// from the SWEEP, the module serves both (tests/pipeline/data/library/by_size.py).
TEST_F(Errors, SweepEntryLaunchingOtherKernels) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    Session s = session();
    std::string kernel = kKernel;
    std::string other = kernel.substr(kernel.find("@triton.jit"));
    other.replace(other.find("_double"), 7, "_triple").replace(other.find("2.0 *"), 5, "3.0 *");
    std::string stub = kStub;
    stub.replace(stub.find("    _double["), 0,
                 "    if x.numel() > 100:\n        _triple[(2,)](x, y, x.numel(), BLOCK=64)\n        return y\n");
    stub.replace(stub.find("[{\"n\": 100}]"), 12, "[{\"n\": 100}, {\"n\": 120}]");
    stub.replace(stub.find("device=dims"), 0, "dtype=getattr(torch, dims[\"dtype\"]), ");
    GenerateOptions g;
    g.dims_json = R"({"n": 100})";
    Json report = failing_cpu_verify(s, write("bysize.py", kernel + "\n\n" + other + stub), g);
    EXPECT_EQ(report.at("results")[0].at("status").str(), "pass") << report.dump(true);
    EXPECT_EQ(report.at("results")[1].at("message").str(),
              "the stub launches ('_triple',) here, but the module was generated for a call that launches ('_double',) "
              "(the stub chooses its kernels by shape or flags; a module serves the launch sequence it was generated "
              "from: generate from a SWEEP entry or call that launches these kernels)");
}

TEST_F(Errors, WorkerCannotImportTorch) {
    // A fake torch package that fails to import, shadowing the real one.
    Session s = session_with_fakes({{"torch", "raise ImportError('simulated broken install')\n"}});
    s.load_forward(write("k.py", std::string(kKernel) + kStub), std::nullopt);
    auto [status, msg] = error_of([&] { s.generate(GenerateOptions{}); });
    EXPECT_EQ(status, TAD_ERR_WORKER);
    EXPECT_EQ(msg, "import: cannot import torch: simulated broken install");
}

TEST_F(Errors, KernelRaisingAtLaunch) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    Session s = session();
    std::string stub = kStub;
    stub.replace(stub.find("(x, y, x.numel(), BLOCK=64)"), 27, "(x, y, BLOCK=64)");
    s.load_forward(write("launch.py", std::string(kKernel) + stub), std::nullopt);
    auto [status, msg] = error_of([&] { s.generate(GenerateOptions{}); });
    EXPECT_EQ(status, TAD_ERR_WORKER);
    EXPECT_EQ(msg.rfind("launch: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("_double"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'n'"), std::string::npos) << msg;
}

TEST_F(Errors, GradientMismatchNamesInputShapeAndErrors) {
    if (!torch_available()) GTEST_SKIP() << "[SKIP] " << kPython << " cannot import torch";
    Session s = session();
    s.load_forward(write("k.py", std::string(kKernel) + kStub), std::nullopt);
    std::string id = s.generate(GenerateOptions{});
    // Tamper with the stored backward (doubling its gradient) and make it the current candidate.
    store::Store st = store::Store::open(fs::join(dir.path(), "work"));
    store::Candidate c = st.load(id);
    size_t at = c.backward_source.find("tl.store(DX + offs, ");
    ASSERT_NE(at, std::string::npos) << c.backward_source;
    c.backward_source.replace(at, 20, "tl.store(DX + offs, 2.0 * ");
    std::string bad = st.add(c);
    s.rollback(bad);
    Json report = failing_cpu_verify(s);
    JsonRef r = report.at("results")[0];
    EXPECT_EQ(r.at("status").str(), "fail");
    EXPECT_EQ(r.at("message").str().rfind("gradient of 'x' (shape [100]) disagrees: max abs err ", 0), 0u)
        << r.at("message").str();
    EXPECT_NE(r.at("message").str().find(", max rel err 0.5"), std::string::npos) << r.at("message").str();
}

}  // namespace

namespace {

// On a machine whose torch sees CUDA but whose triton is broken, the worker falls back to the CPU
// and the GPU verification says why.
TEST_F(Errors, WorkerCannotImportTriton) {
    Session s = session_with_fakes(
        {{"torch",
          "__version__ = '0-fake'\n\nclass cuda:\n    @staticmethod\n    def is_available():\n        return True\n"},
         {"triton", "raise ImportError('simulated broken triton')\n"}});
    s.load_forward(write("k.py", std::string(kKernel) + kStub), std::nullopt);
    GenerateOptions g;
    g.launch_json = R"({"stub": "double", "inputs": [{"name": "x", "index": 0, "kind": "tensor", "dtype": "float32",
        "shape": [100], "stride": [1]}], "outputs": [{"index": 0, "kind": "tensor", "dtype": "float32", "shape": [100],
        "stride": [1]}], "temps": [], "launches": [{"kernel": "_double", "grid": [2, 1, 1], "options": {}, "args": [
        {"name": "X", "kind": "tensor", "ref": {"input": 0}, "offset": 0, "dtype": "float32"},
        {"name": "Y", "kind": "tensor", "ref": {"output": 0}, "offset": 0, "dtype": "float32"},
        {"name": "n", "kind": "int", "value": 100}, {"name": "BLOCK", "kind": "int", "value": 64}]}]})";
    s.generate(g);
    auto [status, msg] = error_of([&] {
        bool passed;
        s.verify(VerifyOptions{}, &passed);
    });
    EXPECT_EQ(status, TAD_ERR_NO_GPU);
    EXPECT_EQ(msg,
              "no_gpu: verify on the GPU needs triton and CUDA (cannot import triton: simulated broken triton); "
              "use the CPU interpreter (--cpu)");
}

}  // namespace

// The self-check of generated modules (emit::check_module), rule by rule on small module texts.
#include <gtest/gtest.h>

#include <string>

#include "emit/emit.h"
#include "frontend/parser.h"
#include "support/error.h"

using namespace tad;

namespace {

const char *kForward = R"(import torch
import triton
import triton.language as tl
import tad

SCALE = 2.0


@triton.jit
def k(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n) * SCALE, mask=offs < n)


@tad.autodiff(grad_inputs=["x"])
def f(x):
    y = torch.empty_like(x)
    k[(1,)](x, y, x.numel(), BLOCK=128)
    return y
)";

// A module of the shape tad writes: the forward copied, a runtime class like the templates' (a
// closure, try/except), a backward kernel, its launcher, the autograd.Function and the entry point.
// Line numbers in the expected messages count from the first line.
const char *kModule = R"(import inspect
import math
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

SCALE = 2.0


@triton.jit
def k(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n) * SCALE, mask=offs < n)


def f(x):
    y = torch.empty_like(x)
    k[(1,)](x, y, x.numel(), BLOCK=128)
    return y


class _Recorded:
    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            try:
                return self.kernel[grid](*args, **kwargs)
            except Exception as e:
                raise RuntimeError(f"{grid}: {e}")

        return launch


k = _Recorded(k)


@triton.jit
def k_bwd(DX, DY, n, BLOCK: tl.constexpr):
    """Reverse mode of k."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    DY = DY + 0
    if n > 0:
        dy = tl.load(DY + offs, mask=mask)
    else:
        dy = tl.full((BLOCK,), 0.0, tl.float32)
    acc, total = dy * SCALE, 0.0
    for i in tl.static_range(2):
        total += i
    tl.store(DX + offs, acc + total + float("inf") * 0, mask=mask)


def f_backward(launches, temps, x, outs, out_layouts, grads):
    d_x = torch.zeros_like(x)
    # launch 0: k
    a = launches[0].args
    k_bwd[launches[0].grid](d_x, grads[0], a["n"], BLOCK=a["BLOCK"], **launches[0].options)
    sizes = [math.prod(g.shape) for g in grads]
    return (d_x,) if sizes else None


class FFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return f(x)

    @staticmethod
    def backward(ctx, *grads):
        (x,) = ctx.saved_tensors
        return f_backward(None, None, x, None, None, grads)


_SIGNATURE = inspect.signature(f)


def forward(*args, **kwargs):
    bound = _SIGNATURE.bind(*args, **kwargs)
    return FFunction.apply(*bound.arguments.values())
)";

frontend::KernelFile forward(const std::string &text = kForward) {
    return frontend::analyze(frontend::parse_source("fwd.py", text));
}

// `kModule` with `from` replaced by `to` (exactly one occurrence).
std::string edit(const std::string &from, const std::string &to, std::string text = kModule) {
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    EXPECT_EQ(text.find(from, at + 1), std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// The check's message, "" when it passes; every failure must be TAD_ERR_INTERNAL.
std::string check(const std::string &module, const frontend::KernelFile &kf = forward()) {
    try {
        emit::check_module(kf, module);
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), TAD_ERR_INTERNAL) << e.what();
        return e.what();
    }
    return "";
}

const std::string kBug = "; this is a bug in tad's emitter";

}  // namespace

TEST(CheckModule, AcceptsTheModuleShapeTadWrites) { EXPECT_EQ(check(kModule), ""); }

TEST(CheckModule, SyntaxErrorNamesTheKernel) {
    EXPECT_EQ(check(edit("    mask = offs < n\n", "    mask = offs < n)\n")),
              "generated module: syntax error: unmatched ')' in kernel 'k_bwd' (line 44:20)" + kBug);
    EXPECT_EQ(check(edit("def f_backward(launches", "def f_backward(launches,,")),
              "generated module: syntax error: invalid syntax in function 'f_backward' (line 56:25)" + kBug);
}

TEST(CheckModule, UndefinedNameInAKernel) {
    EXPECT_EQ(check(edit("tl.store(DX + offs, acc", "tl.store(DX + offs, do_1")),
              "generated module: kernel 'k_bwd' reads 'do_1', which nothing defines (line 53:25)" + kBug);
    // Bound only later in the kernel.
    EXPECT_EQ(check(edit("    mask = offs < n\n", "    mask = offs < n2\n    n2 = n\n")),
              "generated module: kernel 'k_bwd' reads 'n2', which nothing defines (line 44:19)" + kBug);
    // A builtin Triton does not resolve inside a kernel.
    EXPECT_EQ(check(edit("float(\"inf\")", "abs(1.0)")),
              "generated module: kernel 'k_bwd' reads 'abs', which nothing defines (line 53:39)" + kBug);
}

// Launchers, methods and the entry point read Python's builtins and module-level names, their own
// locals only once bound.
TEST(CheckModule, UndefinedNameOutsideKernels) {
    EXPECT_EQ(check(edit("    return (d_x,) if sizes", "    return (d_y,) if sizes")),
              "generated module: function 'f_backward' reads 'd_y', which nothing defines (line 62:13)" + kBug);
    EXPECT_EQ(check(edit("    k_bwd[launches[0].grid]", "    k_bwd_1[launches[0].grid]")),
              "generated module: function 'f_backward' reads 'k_bwd_1', which nothing defines (line 60:5)" + kBug);
    EXPECT_EQ(check(edit("return f_backward(None", "return f_backwards(None")),
              "generated module: function 'FFunction.backward' reads 'f_backwards', which nothing defines (line "
              "74:16)" +
                  kBug);
    EXPECT_EQ(check(edit("FFunction.apply", "FFunctio.apply")),
              "generated module: function 'forward' reads 'FFunctio', which nothing defines (line 82:12)" + kBug);
}

// Top-level statements, decorators and defaults run as the module is imported: they read names
// bound by an earlier statement.
TEST(CheckModule, ImportTimeReadOfANameDefinedLater) {
    EXPECT_EQ(check(edit("inspect.signature(f)", "inspect.signature(forward)")),
              "generated module: top-level statement reads 'forward' before the module defines it (line 77:32)" + kBug);
    std::string m = edit("@triton.jit\ndef k_bwd", "@_fit\n@triton.jit\ndef k_bwd");
    EXPECT_EQ(check(m), "generated module: kernel 'k_bwd' reads '_fit', which nothing defines (line 40:2)" + kBug);
    m = edit("def f_backward", "def _fit(fn):\n    return fn\n\n\ndef f_backward", m);
    EXPECT_EQ(check(m),
              "generated module: kernel 'k_bwd' reads '_fit' before the module defines it (line 40:2)" + kBug);
}

TEST(CheckModule, RebindsAParameter) {
    EXPECT_EQ(check(edit("    DY = DY + 0\n", "    DX = DY + 0\n")),
              "generated module: kernel 'k_bwd' assigns parameter 'DX' before reading it, losing the argument its "
              "launcher passes (line 45:5)" +
                  kBug);
    EXPECT_EQ(check(edit("    DY = DY + 0\n", "    BLOCK = 64\n")),
              "generated module: kernel 'k_bwd' assigns its constexpr parameter 'BLOCK' (line 45:5)" + kBug);
}

// A name Triton reserves, assigned, then used as Triton's (a forward value the user named `float`
// would do that to the `float("inf")` of a later recomputation).
TEST(CheckModule, UsesAReservedNameItAssigned) {
    EXPECT_EQ(check(edit("    acc, total = dy", "    acc, tl = dy")),
              "generated module: kernel 'k_bwd' assigns 'tl', a name Triton reserves, at line 50:10, then uses it as "
              "Triton's (line 51:14)" +
                  kBug);
    EXPECT_EQ(check(edit("    mask = offs < n\n", "    float = offs < n\n    mask = float\n")),
              "generated module: kernel 'k_bwd' assigns 'float', a name Triton reserves, at line 44:5, then uses it "
              "as Triton's (line 54:39)" +
                  kBug);
    // Assigned and used as a value only (a forward value the user named `math`): nothing changes.
    EXPECT_EQ(check(edit("    mask = offs < n\n", "    math = offs < n\n    mask = math\n")), "");
}

TEST(CheckModule, DuplicateParameter) {
    EXPECT_EQ(check(edit("def k_bwd(DX, DY, n,", "def k_bwd(DX, DY, DY,")),
              "generated module: kernel 'k_bwd' has two parameters named 'DY' (line 41:19)" + kBug);
    EXPECT_EQ(check(edit("def __getitem__(self, grid)", "def __getitem__(self, self)")),
              "generated module: function '_Recorded.__getitem__' has two parameters named 'self' (line 27:27)" + kBug);
    // A closure's parameter may take the name of its function's.
    EXPECT_EQ(check(edit("def launch(*args", "def launch(grid, *args")), "");
}

TEST(CheckModule, LaunchWithWrongArguments) {
    EXPECT_EQ(check(edit("(d_x, grads[0], a[\"n\"], BLOCK", "(d_x, grads[0], BLOCK")),
              "generated module: function 'f_backward' launches kernel 'k_bwd' with 2 positional arguments for its 3 "
              "parameters that are not constexpr (line 60:5)" +
                  kBug);
    EXPECT_EQ(check(edit("BLOCK=a[\"BLOCK\"], **", "BLOCK=a[\"BLOCK\"], n=1, **")),
              "generated module: function 'f_backward' passes 'n' by keyword to kernel 'k_bwd', which has no "
              "constexpr 'n' (line 60:70)" +
                  kBug);
    EXPECT_EQ(check(edit("BLOCK=a[\"BLOCK\"], **", "**")),
              "generated module: function 'f_backward' launches kernel 'k_bwd' without its constexpr 'BLOCK' (line "
              "60:5)" +
                  kBug);
}

// The stages of a pipelined loop (passes/pipeline_loops.h): a kernel's wrapper sets them, so only a
// wrapped kernel may be launched without them.
TEST(CheckModule, LoopStagesOnlyWrappedKernelsMayOmit) {
    const std::string staged = edit("def k_bwd(DX, DY, n, BLOCK: tl.constexpr):",
                                    "def k_bwd(DX, DY, n, BLOCK: tl.constexpr, TAD_LOOP_STAGES: tl.constexpr):");
    EXPECT_EQ(check(staged),
              "generated module: function 'f_backward' launches kernel 'k_bwd' without its constexpr "
              "'TAD_LOOP_STAGES' (line 60:5)" +
                  kBug);
    std::string wrapped = edit("@triton.jit\ndef k_bwd", "@_fit_shared_memory\n@triton.jit\ndef k_bwd", staged);
    wrapped = edit("class _Recorded:", "def _fit_shared_memory(fn):\n    return fn\n\n\nclass _Recorded:", wrapped);
    EXPECT_EQ(check(wrapped), "");
}

// Valid to ast.parse, refused by Python's compiler: a forward file's own `from __future__ import`
// copied below the module's header.
TEST(CheckModule, FutureImportAfterTheHeader) {
    EXPECT_EQ(check(edit("import inspect\n", "import inspect\nfrom __future__ import annotations\n")),
              "generated module: 'from __future__ import' at line 2:1 follows another statement (line 1:1), which "
              "Python refuses" +
                  kBug);
    EXPECT_EQ(check("\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\n" + std::string(kModule)), "");
}

TEST(CheckModule, DefinitionRepeated) {
    EXPECT_EQ(check(edit("def f_backward", "def k_bwd(X):\n    pass\n\n\ndef f_backward")),
              "generated module: function 'k_bwd' is defined at line 41:1 and again at line 56:1" + kBug);
    EXPECT_EQ(check(edit("SCALE = 2.0\n", "SCALE = 2.0\nSCALE = 3.0\n")),
              "generated module: name 'SCALE' is defined at line 8:1 and again at line 9:1" + kBug);
    // Defined twice in the forward file too: the copy may repeat it.
    std::string fwd = kForward;
    fwd.replace(fwd.find("SCALE = 2.0\n"), 12, "SCALE = 2.0\nSCALE = 3.0\n");
    EXPECT_EQ(check(edit("SCALE = 2.0\n", "SCALE = 2.0\nSCALE = 3.0\n"), forward(fwd)), "");
}

// The forward file's code is the user's: a name it never defines is not tad's fault, but a
// definition the copy lost is.
TEST(CheckModule, ForwardCopyIsJudgedAgainstTheForwardFile) {
    EXPECT_EQ(check(edit("SCALE = 2.0\n", "")),
              "generated module: kernel 'k' reads 'SCALE', which nothing defines (line 13:59)" + kBug);
    std::string fwd = kForward;
    fwd.replace(fwd.find("SCALE = 2.0\n"), 12, "");
    EXPECT_EQ(check(edit("dy * SCALE", "dy * 2.0", edit("SCALE = 2.0\n", "SCALE_ = 2.0\n")), forward(fwd)), "");
    // The forward kernel may assign its parameters (tad's kernels may not before reading them).
    EXPECT_EQ(check(edit("    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    tl.store",
                         "    X = Y\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    tl.store")),
              "");
    // The stub likewise: its own undefined name stays allowed in its copy.
    const std::string stub_from = "    y = torch.empty_like(x)\n",
                      stub_to = "    y = torch.empty_like(x) or later(x)\n";
    fwd = kForward;
    fwd.replace(fwd.find(stub_from), stub_from.size(), stub_to);
    EXPECT_EQ(check(edit(stub_from, stub_to), forward(fwd)), "");
    EXPECT_EQ(check(edit(stub_from, stub_to)),
              "generated module: function 'f' reads 'later', which nothing defines (line 18:32)" + kBug);
}

TEST(CheckModule, ModuleWithSeveralFaultsReportsTheFirst) {
    std::string m = edit("    mask = offs < n\n", "    mask = offs < nn\n");
    m = edit("    return (d_x,) if sizes", "    return (d_y,) if sizes", m);
    EXPECT_EQ(check(m), "generated module: kernel 'k_bwd' reads 'nn', which nothing defines (line 44:19)" + kBug);
}

// The same checks on a module a model wrote: the fault as a reason, without calling it tad's bug.
TEST(ModuleFault, WordsTheFaultForAModuleTadDidNotWrite) {
    EXPECT_EQ(emit::module_fault(forward(), kModule), "");
    EXPECT_EQ(emit::module_fault(forward(), edit("    mask = offs < n\n", "    mask = offs < n)\n")),
              "syntax error: unmatched ')' in kernel 'k_bwd' (line 44:20)");
    EXPECT_EQ(emit::module_fault(forward(), edit("tl.store(DX + offs, acc", "tl.store(DX + offs, do_1")),
              "kernel 'k_bwd' reads 'do_1', which nothing defines (line 53:25)");
}

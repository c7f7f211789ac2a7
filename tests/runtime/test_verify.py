"""The worker's verify and bench logic, run on the CPU with pure-torch stand-ins for the stub and
the generated module (the worker itself only runs them on a GPU)."""

import os
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(HERE, "..", "..", "src", "runtime", "python")
sys.path[:0] = [os.path.join(PYDIR, "standin"), PYDIR]

import torch  # noqa: E402

import tad_bench  # noqa: E402
import tad_trace  # noqa: E402
import tad_userfile  # noqa: E402
import tad_verify  # noqa: E402

FORWARD = """
import torch

def stub(x, w, scale=2.0):
    return torch.tanh(x) * w * scale, (x * x).sum()

def make_args(dims):
    if dims.get("fail") == dims["dtype"]:
        raise ValueError("no " + dims["dtype"])
    if dims.get("oom"):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 1 TiB")
    dtype = getattr(torch, dims["dtype"])
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=dims["device"])
    w = torch.randn(dims["N"], dtype=dtype, device=dims["device"])
    return (x, w), {}
"""

REFERENCE = """
def reference(x, w, scale=2.0):
    return torch.tanh(x) * w * scale, (x * x).sum()

def bytes(dims, mode):
    return 4e6

def flops(dims, mode):
    return 2e9
"""

GENERATED = """
import torch

class _Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, scale):
        ctx.save_for_backward(x, w)
        ctx.scale = scale
        return torch.tanh(x) * w * scale, (x * x).sum()

    @staticmethod
    def backward(ctx, dy, dsum):
        x, w = ctx.saved_tensors
        t = torch.tanh(x)
        dx = dy * w * ctx.scale * (1 - t * t) + 2 * x * dsum * GX_FACTOR
        dw = (dy * t * ctx.scale).sum(0)
        return dx, dw, None

GRAD_INPUTS = ("x", "w")

def forward(x, w, scale=2.0):
    return _Fn.apply(x, w, scale)
"""

# A stub that, like dataset/dropout.py's kernel, computes in float32 whatever its input dtype, and a
# generated module for it; neither has a reference().
FLOAT32_FORWARD = """
import torch

def keep(x):
    return torch.arange(x.numel(), device=x.device).reshape(x.shape) % 3 > 0

def stub(x, p=0.5):
    return torch.where(keep(x), torch.tanh(x.float()) / (1 - p), 0.0).to(x.dtype)

def make_args(dims):
    dtype = getattr(torch, dims["dtype"])
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=dims["device"]),), {}
"""

FLOAT32_GENERATED = FLOAT32_FORWARD + """
class _Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, p):
        ctx.save_for_backward(x)
        ctx.p = p
        return stub(x, p)

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensors
        t = torch.tanh(x.float())
        dx = torch.where(keep(x), dy.float() * (1 - t * t) / (1 - ctx.p), 0.0) * GX_FACTOR
        return dx.to(x.dtype), None

GRAD_INPUTS = ("x",)

def forward(x, p=0.5):
    return _Fn.apply(x, p)
"""


# A stub updating x in place (x <- tanh(x) * w) and returning it, and a generated module that marks x
# dirty, as tad's do for such stubs.
INPLACE_FORWARD = """
import torch

def stub(x, w):
    x.copy_(torch.tanh(x) * w)
    return x

def make_args(dims):
    dtype = getattr(torch, dims["dtype"])
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=dims["device"])
    w = torch.randn(dims["N"], dtype=dtype, device=dims["device"])
    return (x, w), {}
"""

INPLACE_REFERENCE = """
def reference(x, w):
    return torch.tanh(x) * w
"""

INPLACE_GENERATED = """
import torch

class _Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x.detach().clone(), w)
        x.copy_(torch.tanh(x.detach()) * w)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        t = torch.tanh(x)
        return dy * w * (1 - t * t) * GX_FACTOR, (dy * t).sum(0)

GRAD_INPUTS = ("x", "w")
DIRTY = ("x",)

def forward(x, w):
    return _Fn.apply(x, w)
"""


# A kink (relu at 0.1) where x holds exactly float32(0.1): computed in float32, x - 0.1 is 0 and the
# gradient there is 0; in float64 it is 1.5e-9 and the gradient 0.004. PyTorch in float32 and the
# generated module (which computes like it) err alike against the float64 gradient.
KINK_FORWARD = """
import torch

def stub(x):
    return x + 0.004 * torch.relu(x - 0.1)

def make_args(dims):
    dtype = getattr(torch, dims["dtype"])
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=dims["device"])
    x.view(-1)[::3] = 0.1
    return (x,), {}

def reference(x):
    return x + 0.004 * torch.relu(x - 0.1)
"""

KINK_GENERATED = """
import torch

class _Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x + 0.004 * torch.relu(x - 0.1)

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensors
        return dy * (1 + 0.004 * (x - 0.1 > 0).to(dy.dtype)) * GX_FACTOR

GRAD_INPUTS = ("x",)

def forward(x):
    return _Fn.apply(x)
"""


# A mean over 16384 elements scaled by 1e-4: the value is within float16's range, its gradient
# (1.2e-8 x) is not: float16 rounds even the exact gradient to zero.
TINY_FORWARD = """
import torch

def stub(x):
    return (x * x).mean() * 1e-4

def make_args(dims):
    dtype = getattr(torch, dims["dtype"])
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=dims["device"]),), {}

def reference(x):
    return (x * x).mean() * 1e-4
"""

TINY_GENERATED = """
import torch

class _Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x * x).mean() * 1e-4

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensors
        return dy * 2 * x / x.numel() * 1e-4 * GX_FACTOR

GRAD_INPUTS = ("x",)

def forward(x):
    return _Fn.apply(x)
"""


# Leaky ReLU whose kernel takes slope 1 at exactly 0 (x >= 0), where PyTorch's takes 0.01: make_args
# puts 9 exact zeros among 65536 elements, as CUDA's randn yields some (and in float16 on the CPU
# randn yields more). A wrong backward scales the gradient where x > 3.6 (about as few elements),
# where there is no kink.
LEAKY_FORWARD = """
import torch

def stub(x):
    return torch.where(x >= 0, x, 0.01 * x)

def make_args(dims):
    dtype = getattr(torch, dims["dtype"])
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=dims["device"])
    x.view(-1)[::8000] = 0.0
    return (x,), {}

def reference(x):
    return torch.nn.functional.leaky_relu(x, 0.01)
"""

LEAKY_GENERATED = """
import torch

class _Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.where(x >= 0, x, 0.01 * x)

    @staticmethod
    def backward(ctx, dy):
        x, = ctx.saved_tensors
        wrong = torch.where(x > 3.6, GX_FACTOR, 1.0)
        return dy * torch.where(x >= 0, 1.0, 0.01).to(dy.dtype) * wrong

GRAD_INPUTS = ("x",)

def forward(x):
    return _Fn.apply(x)
"""


def module_from(source, factor=1.0):
    module = types.ModuleType("m")
    module.__file__ = "<m>"
    module.GX_FACTOR = factor
    exec(source, module.__dict__)
    return module


def run(forward_src, factor=1.0, dims=None, dtypes=("float32",), grad_inputs=("x", "w"),
        generated_src=GENERATED):
    module = module_from(forward_src)
    generated = module_from(generated_src, factor)
    progress = []
    report = tad_verify.verify(module, module.stub, generated, [dims or {"M": 8, "N": 16}],
                               list(dtypes), 3, list(grad_inputs), "cpu",
                               lambda m, f: progress.append((m, f)))
    return report["results"], progress


class VerifyWithReference(unittest.TestCase):
    def test_correct_backward_passes(self):
        entries, progress = run(FORWARD + REFERENCE, dtypes=("float32", "float64"))
        self.assertEqual([e["status"] for e in entries], ["pass", "pass"])
        self.assertEqual(entries[0]["reference"], "reference()")
        self.assertIsNone(entries[0]["message"])
        self.assertEqual([g["name"] for g in entries[0]["grads"]], ["x", "w"])
        self.assertEqual(entries[0]["grads"][0]["shape"], [8, 16])
        self.assertLess(entries[1]["grads"][0]["max_rel_err"], 1e-12)
        self.assertEqual([o["index"] for o in entries[0]["outputs"]], [0, 1])
        self.assertLess(entries[0]["outputs"][0]["ref_max_rel_err"], 1e-6)
        self.assertEqual(progress, [("verify 1/2: {'M': 8, 'N': 16} float32", 0.0),
                                    ("verify 2/2: {'M': 8, 'N': 16} float64", 0.5)])

    def test_wrong_backward_fails_on_the_wrong_gradient_only(self):
        entries, _ = run(FORWARD + REFERENCE, factor=1.5)
        self.assertEqual(entries[0]["status"], "fail")
        ok = {g["name"]: g["ok"] for g in entries[0]["grads"]}
        self.assertEqual(ok, {"x": False, "w": True})
        self.assertGreater(entries[0]["grads"][0]["max_rel_err"], 1e-2)


class VerifyAgainstEagerError(unittest.TestCase):
    def test_a_gradient_as_far_off_as_eager_pytorch_at_a_kink_passes(self):
        entries, _ = run(KINK_FORWARD, grad_inputs=("x",), generated_src=KINK_GENERATED)
        grad = entries[0]["grads"][0]
        self.assertGreater(grad["max_rel_err"], entries[0]["rtol"])  # beyond the plain tolerance
        self.assertAlmostEqual(grad["eager_rel_err"], grad["max_rel_err"], delta=1e-6)
        self.assertEqual(entries[0]["status"], "pass", entries)

    def test_a_wrong_gradient_still_fails(self):
        entries, _ = run(KINK_FORWARD, factor=1.01, grad_inputs=("x",),
                         generated_src=KINK_GENERATED)
        self.assertEqual(entries[0]["status"], "fail")

    def test_float64_has_no_eager_bound(self):
        entries, _ = run(KINK_FORWARD, dtypes=("float64",), grad_inputs=("x",),
                         generated_src=KINK_GENERATED)
        self.assertNotIn("eager_rel_err", entries[0]["grads"][0])
        self.assertEqual(entries[0]["status"], "pass", entries)


class VerifyUnrepresentable(unittest.TestCase):
    def test_a_gradient_the_dtype_cannot_hold_is_skipped_saying_why(self):
        entries, _ = run(TINY_FORWARD, dims={"M": 128, "N": 128}, dtypes=("float32", "float16"),
                         grad_inputs=("x",), generated_src=TINY_GENERATED)
        self.assertEqual([e["status"] for e in entries], ["pass", "skipped"], entries)
        grad = entries[1]["grads"][0]
        self.assertTrue(grad["unrepresentable"])
        self.assertGreater(grad["rounding_rel_err"], 10 * entries[1]["rtol"])  # beyond any bound
        self.assertEqual(entries[1]["message"].split(": ")[0],
                         "float16 cannot hold the gradient of 'x'")

    def test_float32_still_tells_a_wrong_one(self):
        entries, _ = run(TINY_FORWARD, factor=1.5, dims={"M": 128, "N": 128},
                         grad_inputs=("x",), generated_src=TINY_GENERATED)
        self.assertEqual(entries[0]["status"], "fail")
        self.assertNotIn("unrepresentable", entries[0]["grads"][0])


class VerifyKinks(unittest.TestCase):
    def test_a_slope_convention_at_exact_kinks_passes_saying_how_many(self):
        entries, _ = run(LEAKY_FORWARD, dims={"M": 256, "N": 256}, dtypes=("float32", "float16"),
                         grad_inputs=("x",), generated_src=LEAKY_GENERATED)
        self.assertEqual([e["status"] for e in entries], ["pass", "pass"], entries)
        self.assertEqual(entries[0]["grads"][0]["kinks"], 9)
        self.assertGreaterEqual(entries[1]["grads"][0]["kinks"], 9)
        for e in entries:
            grad = e["grads"][0]
            self.assertGreater(grad["max_rel_err"], e["rtol"])  # off at the kinks themselves
            self.assertLessEqual(grad["kink_rel_err"], e["rtol"])

    def test_a_gradient_wrong_at_a_few_smooth_points_still_fails(self):
        entries, _ = run(LEAKY_FORWARD, factor=1.5, dims={"M": 256, "N": 256},
                         grad_inputs=("x",), generated_src=LEAKY_GENERATED)
        self.assertEqual(entries[0]["status"], "fail")
        grad = entries[0]["grads"][0]
        self.assertNotIn("kinks", grad)
        self.assertGreater(grad["off_elements"], 9)  # the kinks and the wrong elements
        self.assertGreater(grad["kink_rel_err"], entries[0]["rtol"])  # wrong beside the test point too


class VerifyTf32(unittest.TestCase):
    def test_tf32_kernels_are_checked_at_float16_tolerance_in_float32(self):
        generated_src = GENERATED + "\nTF32 = True\n"
        entries, _ = run(FORWARD + REFERENCE, dtypes=("float32", "float64"),
                         generated_src=generated_src)
        self.assertEqual([e["rtol"] for e in entries],
                         [tad_verify.RTOL["float16"], tad_verify.RTOL["float64"]])
        # 1% off passes at float16's tolerance only: TF32 rounds like float16.
        entries, _ = run(FORWARD + REFERENCE, factor=1.01, generated_src=generated_src)
        self.assertEqual(entries[0]["status"], "pass")
        entries, _ = run(FORWARD + REFERENCE, factor=1.01)
        self.assertEqual(entries[0]["status"], "fail")


RELU_MATMUL_FORWARD = """
import torch

def stub(x, w):
    return torch.relu(x @ w)

def make_args(dims):
    dtype = getattr(torch, dims["dtype"])
    x = torch.randn(dims["M"], dims["K"], dtype=dtype, device=dims["device"])
    w = torch.randn(dims["K"], dims["N"], dtype=dtype, device=dims["device"])
    return (x, w), {}

def reference(x, w):
    return torch.relu(x @ w)
"""

# A stand-in for a TF32 kernel: relu(x w) with both operands cut to TF32, products and sums in
# float32, and its exact backward at those operands.
RELU_MATMUL_GENERATED = """
import torch

class _Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        xr, wr = tf32(x).detach(), tf32(w).detach()
        z = xr @ wr
        ctx.save_for_backward(xr, wr, z)
        return torch.relu(z)

    @staticmethod
    def backward(ctx, dy):
        xr, wr, z = ctx.saved_tensors
        g = dy * (z > 0).to(dy.dtype)
        return g @ wr.T, xr.T @ g

GRAD_INPUTS = ("x", "w")

def forward(x, w):
    return _Fn.apply(x, w)
"""


class Tf32Reference(unittest.TestCase):
    def test_tf32_cuts_the_low_13_bits_and_passes_the_gradient_through(self):
        x = torch.tensor([1 + 2**-11, -(1 + 2**-11), 1 + 3 * 2**-11, 1 - 2**-24, 3.0],
                         dtype=torch.float64, requires_grad=True)
        y = tad_verify.tf32(x)
        self.assertEqual(y.tolist(), [1.0, -1.0, 1 + 2**-10, 1 - 2**-11, 3.0])
        y.sum().backward()
        self.assertEqual(x.grad.tolist(), [1.0] * 5)

    def test_products_round_their_operands_and_nothing_else(self):
        gen = torch.Generator().manual_seed(1)
        a, b, bias = (torch.randn(*s, generator=gen, dtype=torch.float64) for s in ((5, 7), (7, 3), (3,)))
        r, linear = tad_verify.tf32, torch.nn.functional.linear
        expected = (r(a) @ r(b), torch.addmm(bias, r(a), r(b)), linear(r(a), r(b).T, bias), a + bias[0])
        with tad_verify.Tf32Products():
            got = (a @ b, torch.addmm(bias, a, b), linear(a, b.T, bias), a + bias[0])
        for g, e in zip(got, expected):
            self.assertTrue(torch.equal(g, e))
        self.assertFalse(torch.equal(a @ b, expected[0]))

    def test_a_tf32_kernel_matches_the_reference_at_a_kink(self):
        # 64x256x64: thousands of pre-activations within TF32's rounding of 0. Against products of
        # the unrounded operands, relu's mask differs wherever rounding flips a sign; with them
        # rounded as the kernel does, only float32 sums differ, and the gradients agree to ~1e-6.
        module = module_from(RELU_MATMUL_FORWARD)
        generated = module_from(RELU_MATMUL_GENERATED)
        generated.tf32 = tad_verify.tf32
        dims = [{"M": 64, "K": 256, "N": 64}]

        def worst(tf32_flag):
            generated.TF32 = tf32_flag
            report = tad_verify.verify(module, module.stub, generated, dims, ["float32"], 3,
                                       ["x", "w"], "cpu", lambda m, f: None)
            return max(g["max_rel_err"] for g in report["results"][0]["grads"])

        self.assertLess(worst(True), 1e-5)
        self.assertGreater(worst(False), 1e-4)


class VerifyWithFiniteDifferences(unittest.TestCase):
    def test_correct_backward_passes(self):
        entries, _ = run(FORWARD, dtypes=("float32", "float64"))
        self.assertEqual([e["status"] for e in entries], ["pass", "pass"])
        self.assertEqual(entries[0]["reference"], "finite differences")
        # A stub that computes in float64 keeps the strict float64 step and tolerance.
        self.assertEqual([e["fd_precision"] for e in entries], ["float64", "float64"])
        self.assertEqual(entries[0]["fd_rtol"], 1e-5)
        self.assertLess(entries[0]["grads"][0]["fd_rel_err"], 1e-5)
        self.assertLess(entries[1]["grads"][1]["max_rel_err"], 1e-5)

    def test_wrong_backward_fails(self):
        entries, _ = run(FORWARD, factor=1.5, dtypes=("float64",))
        self.assertEqual(entries[0]["status"], "fail")
        self.assertFalse(entries[0]["grads"][0]["ok"])
        self.assertTrue(entries[0]["grads"][1]["ok"])

    def test_nan_gradient_fails(self):
        # max() keeps its first argument against a NaN: a NaN gradient used to pass with error 0.
        entries, _ = run(FORWARD, factor=float("nan"), dtypes=("float64",))
        self.assertEqual(entries[0]["status"], "fail")
        self.assertFalse(entries[0]["grads"][0]["ok"])
        self.assertEqual(entries[0]["grads"][0]["message"],
                         "the gradient or the finite differences of the stub are not finite")
        self.assertTrue(entries[0]["grads"][1]["ok"])

    def test_stub_computing_in_float32_is_checked_at_float32_precision(self):
        # At the float64 step its differences would measure float32 rounding (~1e-3), not slope.
        entries, _ = run(FLOAT32_FORWARD, dtypes=("float32", "float64"), grad_inputs=("x",),
                         generated_src=FLOAT32_GENERATED, dims={"M": 16, "N": 64})
        self.assertEqual([e["status"] for e in entries], ["pass", "pass"])
        self.assertEqual([e["fd_precision"] for e in entries], ["float32", "float32"])
        self.assertEqual(entries[0]["fd_rtol"], tad_verify.FD["float32"][1])

    def test_wrong_backward_of_a_float32_stub_fails(self):
        # 1% off: beyond float32 finite differences' tolerance.
        entries, _ = run(FLOAT32_FORWARD, factor=1.01, dtypes=("float32", "float64"),
                         grad_inputs=("x",), generated_src=FLOAT32_GENERATED)
        self.assertEqual([e["status"] for e in entries], ["fail", "fail"])

    def test_effective_precision(self):
        x = torch.randn(100, dtype=torch.float64)
        self.assertEqual(tad_verify.effective_precision([x]), "float64")
        self.assertEqual(tad_verify.effective_precision([x.float().double()]), "float32")
        self.assertEqual(tad_verify.effective_precision([x.float().double(), x]), "float64")
        self.assertEqual(tad_verify.effective_precision([x.float()]), "float32")

    def test_make_args_failing_in_float64_is_explained(self):
        entries, _ = run(FORWARD, dims={"M": 2, "N": 2, "fail": "float64"})
        self.assertEqual(entries[0]["status"], "error")
        self.assertEqual(entries[0]["error"]["kind"], "exception")
        self.assertEqual(entries[0]["error"]["message"],
                         "without reference() gradients are checked by finite differences in "
                         "float64, and for dtype float64 make_args raised ValueError: no float64")


class VerifyInPlace(unittest.TestCase):
    """Every call gets its own copy of the inputs the stub updates: the generated forward a non-leaf
    one, and the stub, reference() and finite differences inputs no earlier call has changed."""

    def test_correct_backward_passes_with_a_reference(self):
        entries, _ = run(INPLACE_FORWARD + INPLACE_REFERENCE, dtypes=("float32", "float64"),
                         generated_src=INPLACE_GENERATED)
        self.assertEqual([e["status"] for e in entries], ["pass", "pass"], entries)
        self.assertLess(entries[1]["outputs"][0]["ref_max_rel_err"], 1e-12)

    def test_correct_backward_passes_by_finite_differences(self):
        entries, _ = run(INPLACE_FORWARD, dtypes=("float64",), generated_src=INPLACE_GENERATED)
        self.assertEqual(entries[0]["status"], "pass", entries)
        self.assertLess(entries[0]["grads"][0]["max_rel_err"], 1e-5)

    def test_wrong_backward_fails(self):
        entries, _ = run(INPLACE_FORWARD + INPLACE_REFERENCE, factor=1.5,
                         generated_src=INPLACE_GENERATED)
        self.assertEqual(entries[0]["status"], "fail")
        self.assertFalse(entries[0]["grads"][0]["ok"])

    def test_bench_times_the_backward_of_an_in_place_stub(self):
        module = module_from(INPLACE_FORWARD + INPLACE_REFERENCE)
        generated = module_from(INPLACE_GENERATED)
        report = tad_bench.bench(module, module.stub, generated, [{"M": 8, "N": 16}], ["float32"],
                                 ["x", "w"], "cpu", lambda fn: (fn(), 1.0)[1], lambda m, f: None)
        self.assertEqual(report["results"][0]["status"], "ok", report)


class VerifyErrors(unittest.TestCase):
    def test_oom_is_skipped_only_where_not_required(self):
        optional, _ = run(FORWARD, dims={"M": 2, "N": 2, "oom": True, "required": False})
        required, _ = run(FORWARD, dims={"M": 2, "N": 2, "oom": True})
        self.assertEqual(optional[0]["status"], "skipped")
        self.assertEqual(required[0]["status"], "error")
        self.assertEqual(required[0]["error"]["kind"], "oom")
        self.assertIn("OutOfMemoryError: CUDA out of memory", required[0]["error"]["message"])

    def test_user_exception_has_message_and_traceback(self):
        entries, _ = run(FORWARD, dims={"M": 2, "N": 2, "fail": "float32"})
        error = entries[0]["error"]
        self.assertEqual((error["kind"], error["message"]),
                         ("exception", "make_args raised ValueError: no float32"))
        self.assertEqual(entries[0]["message"], "exception: make_args raised ValueError: no float32")
        self.assertIn("in make_args", error["traceback"])

    def test_failing_reference_and_stub_say_so_and_where(self):
        failing = FORWARD.replace("    return torch.tanh(x) * w * scale, (x * x).sum()",
                                  "    if x.shape[0] == 3:\n"
                                  "        raise RuntimeError('three rows')\n"
                                  "    return torch.tanh(x) * w * scale, (x * x).sum()")
        failing += "\ndef reference(x, w, scale=2.0):\n    return 1 / 0\n"
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "failing.py")
            with open(path, "w") as f:
                f.write(failing)
            module = tad_userfile.load_module(path)
            lines = failing.splitlines()
            stub_line = lines.index("        raise RuntimeError('three rows')") + 1
            ref_line = lines.index("    return 1 / 0") + 1
            report = tad_verify.verify(module, module.stub, module_from(GENERATED),
                                       [{"M": 2, "N": 4}, {"M": 3, "N": 4}], ["float32"], 0,
                                       ["x", "w"], "cpu", lambda m, f: None)
        messages = [e["message"] for e in report["results"]]
        self.assertEqual(messages, [
            f"exception: reference() raised ZeroDivisionError: division by zero (at {path}:{ref_line})",
            f"exception: stub 'stub' raised RuntimeError: three rows (at {path}:{stub_line})"])
        self.assertEqual(report["results"][0]["error"]["location"], f"{path}:{ref_line}")

    def test_gradient_input_that_is_no_tensor(self):
        entries, _ = run(FORWARD, grad_inputs=("x", "scale"))
        self.assertEqual(entries[0]["error"]["kind"], "bad_request")
        self.assertIn("'scale' is not a floating-point tensor", entries[0]["error"]["message"])


class Bench(unittest.TestCase):
    def test_times_every_measurement_with_the_given_timer(self):
        module = module_from(FORWARD + REFERENCE)
        generated = module_from(GENERATED)
        calls = []

        def timer(fn):
            calls.append(fn())
            return 2.0

        report = tad_bench.bench(module, module.stub, generated, [{"M": 4, "N": 8}], ["float32"],
                                 ["x", "w"], "cpu", timer, lambda m, f: None)
        entry = report["results"][0]
        self.assertEqual(entry["status"], "ok")
        self.assertEqual((entry["fwd_ms"], entry["bwd_ms"], entry["ref_bwd_ms"]), (2.0, 2.0, 2.0))
        self.assertAlmostEqual(entry["bwd_gbps"], 2.0)
        self.assertAlmostEqual(entry["fwd_tflops"], 1.0)
        self.assertEqual(len(calls[1]), 2)  # the backward returns one gradient per input
        self.assertIn("compiled_ref_bwd_ms", entry)
        self.assertIsNone(entry["message"])


class UserFile(unittest.TestCase):
    def test_reimport_sees_an_edited_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "f.py")
            with open(path, "w") as f:
                f.write("VALUE = 1\n")
            first = tad_userfile.load_module(path)
            with open(path, "w") as f:
                f.write("VALUE = 2\n")
            second = tad_userfile.load_module(path)
            self.assertEqual((first.VALUE, second.VALUE), (1, 2))
            self.assertNotIn(first.__name__, sys.modules)

    def test_make_args_return_forms(self):
        for result, expected in ((((1,), {"a": 2}), ((1,), {"a": 2})), ({"a": 2}, ((), {"a": 2})),
                                 ((1, 2), ((1, 2), {})), ([1], ((1,), {}))):
            module = types.ModuleType("m")
            module.make_args = lambda dims, r=result: r
            self.assertEqual(tad_userfile.make_args(module, {}), expected)

    def test_make_args_returning_something_else_is_diagnosed(self):
        for result, name in ((5, "int"), (None, "NoneType"), (torch.zeros(2), "Tensor")):
            module = types.ModuleType("m")
            module.make_args = lambda dims, r=result: r
            with self.assertRaises(tad_trace.TadError) as caught:
                tad_userfile.make_args(module, {})
            self.assertEqual(caught.exception.message,
                             f"make_args returned {name}, not (args, kwargs): return a tuple of the "
                             "stub's positional arguments and a dict of its keyword arguments, e.g. "
                             "((x, w), {'eps': 1e-5})")
            line = module.make_args.__code__.co_firstlineno
            self.assertEqual(caught.exception.location, f"{__file__}:{line}")


if __name__ == "__main__":
    unittest.main()

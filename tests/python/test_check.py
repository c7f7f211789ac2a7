"""@tad.autodiff's check on first use: the dot-product test of the generated module (its jvp against
its backward) on the first differentiable call of each specialization key.

Fake generated modules, pure torch, are planted in the cache where the real one would be: the check
runs here without triton and without a GPU. GpuCheck runs it on examples/gelu.py's real kernels.
"""

import glob
import inspect
import json
import os
import shutil
import sys
import tempfile
import types
import unittest
import warnings

import _support
import torch

import tad
from tad import _autodiff, _check, _dotcompare

STUBS = '''\
import torch

import tad

CALLS = []


@tad.autodiff(grad_inputs=("x", "w"))
def mul(x, w, scale=2.0):
    CALLS.append("mul")
    return torch.tanh(x) * w * scale, (x * x).sum()


@tad.autodiff(grad_inputs=("x", "w"), check=False)
def mul_unchecked(x, w, scale=2.0):
    CALLS.append("mul_unchecked")
    return torch.tanh(x) * w * scale, (x * x).sum()


@tad.autodiff(grad_inputs=("x", "w"))
def update(x, w, stats):
    CALLS.append("update")
    stats.add_(1.0)
    return x.add_(torch.tanh(w))


@tad.autodiff(grad_inputs=("x",))
def dropout(x):
    CALLS.append("dropout")
    return x * (torch.rand(x.shape) > 0.5)
'''

# The generated module of `mul` and `mul_unchecked`, by hand: y = tanh(x) w scale, s = sum(x^2).
# W_FACTOR scales the backward's gradient of w (1: right); PASSES records forward and jvp calls.
MUL = '''\
import torch

GRAD_INPUTS = ("x", "w")
NUM_OUTPUTS = 2
TF32 = {tf32}
DIRTY = ()
JVP_UNSUPPORTED = None
W_FACTOR = {w_factor}
PASSES = []


class _Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, scale):
        ctx.save_for_backward(x, w)
        ctx.scale = scale
        return torch.tanh(x) * w * scale, (x * x).sum()

    @staticmethod
    def backward(ctx, dy, ds):
        x, w = ctx.saved_tensors
        t = torch.tanh(x)
        dx = (1 - t * t) * w * ctx.scale * dy + 2 * x * ds
        dw = (t * dy * ctx.scale).sum(0) * W_FACTOR
        return dx, dw, None


def forward(x, w, scale=2.0):
    PASSES.append("forward")
    return _Mul.apply(x, w, scale)


def jvp(x, w, scale=2.0, *, tangents):
    PASSES.append(("jvp", sorted(tangents)))
    dx = tangents.get("x", torch.zeros_like(x))
    dw = tangents.get("w", torch.zeros_like(w))
    t = torch.tanh(x)
    dy = ((1 - t * t) * dx * w + t * dw) * scale
    return (t * w * scale, (x * x).sum()), (dy, (2 * x * dx).sum())
'''

# `update`: x <- x + tanh(w), returned (DIRTY); stats <- stats + 1, not returned (DIRTY does not say).
UPDATE = '''\
import torch

GRAD_INPUTS = ("x", "w")
DIRTY = ("x",)
JVP_UNSUPPORTED = None
PASSES = []


class _Update(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, stats):
        ctx.save_for_backward(w)
        stats.add_(1.0)
        ctx.mark_dirty(x)
        return x.add_(torch.tanh(w))

    @staticmethod
    def backward(ctx, dy):
        w, = ctx.saved_tensors
        t = torch.tanh(w)
        return dy, ((1 - t * t) * dy).sum(0), None


def forward(x, w, stats):
    PASSES.append("forward")
    return _Update.apply(x, w, stats)


def jvp(x, w, stats, *, tangents):
    PASSES.append(("jvp", sorted(tangents)))
    t = torch.tanh(w)
    dx = tangents.get("x", torch.zeros_like(x))
    dw = tangents.get("w", torch.zeros_like(w))
    stats.add_(1.0)
    return x.add_(t), dx + (1 - t * t) * dw
'''

# `dropout`: y = x * mask, the mask drawn from torch's global generator in every pass.
DROPOUT = '''\
import torch

GRAD_INPUTS = ("x",)
DIRTY = ()
JVP_UNSUPPORTED = None
PASSES = []


class _Dropout(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mask = torch.rand(x.shape) > 0.5
        ctx.save_for_backward(mask)
        return x * mask

    @staticmethod
    def backward(ctx, dy):
        mask, = ctx.saved_tensors
        return dy * mask


def forward(x):
    PASSES.append("forward")
    return _Dropout.apply(x)


def jvp(x, *, tangents):
    PASSES.append(("jvp", sorted(tangents)))
    mask = torch.rand(x.shape) > 0.5
    return x * mask, tangents["x"] * mask
'''

NO_JVP = '''\
import torch

GRAD_INPUTS = ("x", "w")
DIRTY = ()
JVP_UNSUPPORTED = "stubs.py:9:5: unsupported construct 'for_begin'"


def forward(x, w, scale=2.0):
    return torch.tanh(x) * w * scale, (x * x).sum()
'''

# A gradient input that may be None.
OPTIONAL = '''\
GRAD_INPUTS = ("x", "w")


def forward(x, w=None):
    return x * 2.0 if w is None else x * w


def jvp(x, w=None, *, tangents):
    assert w is None and sorted(tangents) == ["x"]
    return forward(x, w), tangents["x"] * 2.0
'''


def args(dtype=torch.float32, requires_grad=True, seed=5):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(8, 32, generator=gen, dtype=torch.float64).to(dtype)
    w = torch.randn(32, generator=gen, dtype=torch.float64).to(dtype)
    return x.requires_grad_(requires_grad), w.requires_grad_(requires_grad)


class CheckCase(unittest.TestCase):
    """A private $TAD_CACHE_DIR, TAD_CHECK unset, and the stubs above in a file of their own."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tad-check-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.cache = os.path.join(self.tmp, "cache")
        for name, value in (("TAD_CACHE_DIR", self.cache), ("TAD_CHECK", None)):
            self.set_env(name, value)
        path = os.path.join(self.tmp, "stubs.py")
        with open(path, "w") as f:
            f.write(STUBS)
        self.stubs = _support.import_file(path)

    def set_env(self, name, value):
        saved = os.environ.get(name)
        self.addCleanup(lambda: os.environ.pop(name, None) if saved is None
                        else os.environ.__setitem__(name, saved))
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value

    def plant(self, wrapper, call_args, text, call_kwargs=None):
        """Writes `text` where the generated module of wrapper(*call_args) is cached; its path."""
        raw = wrapper.__tad_stub__
        key = _autodiff.specialization_key(inspect.signature(raw), call_args, call_kwargs or {})
        path = _autodiff.cache_file(raw, key)
        _autodiff.write_atomically(path, text)
        return path

    def generated(self, path):
        """The planted module as the wrapper imported it (same name, so its PASSES)."""
        return sys.modules["tad_generated_" + os.path.basename(path)[:16]]

    def markers(self):
        return sorted(glob.glob(os.path.join(self.cache, "*" + _check.MARKER_SUFFIX)))

    def jvps(self, path):
        return [p for p in self.generated(path).PASSES if p != "forward"]


class FirstUse(CheckCase):
    def test_a_right_backward_passes_and_is_checked_once_per_key(self):
        x, w = args()
        path = self.plant(self.stubs.mul, (x, w), MUL.format(w_factor=1.0, tf32=False))
        y, s = self.stubs.mul(x, w)
        # One reverse pass, one forward-mode pass per gradient input, then the call itself.
        self.assertEqual(self.generated(path).PASSES,
                         ["forward", ("jvp", ["x"]), ("jvp", ["w"]), "forward"])
        self.assertEqual(self.stubs.CALLS, [])
        (y.sum() + s).backward()
        self.assertIsNotNone(x.grad)
        # Same key, other values and shapes: no check.
        self.stubs.mul(*args(seed=6), scale=0.5)
        self.stubs.mul(torch.randn(3, 5, requires_grad=True), torch.randn(5))
        self.assertEqual(len(self.jvps(path)), 2)
        # A new key is checked on its own first call.
        x64, w64 = args(torch.float64)
        path64 = self.plant(self.stubs.mul, (x64, w64), MUL.format(w_factor=1.0, tf32=False))
        self.stubs.mul(x64, w64)
        self.assertEqual(len(self.jvps(path64)), 2)
        self.assertEqual(len(self.jvps(path)), 2)

    def test_a_passing_check_is_recorded_beside_the_module(self):
        x, w = args()
        path = self.plant(self.stubs.mul, (x, w), MUL.format(w_factor=1.0, tf32=False))
        self.stubs.mul(x, w)
        [marker] = self.markers()
        self.assertTrue(marker.startswith(path[:-3] + "."))
        with open(marker) as f:
            record = json.load(f)
        self.assertEqual((record["status"], record["module"], record["stub"]), ("pass", path, "mul"))
        self.assertEqual([e["name"] for e in record["inputs"]], ["x", "w"])
        self.assertEqual(record["environment"]["devices"], ["cpu"])
        # A new process (a fresh wrapper) trusts the record: it imports the module and checks nothing.
        again = tad.autodiff(grad_inputs=("x", "w"))(self.stubs.mul.__tad_stub__)
        again(x, w)
        self.assertEqual(self.jvps(path), [])
        # A module file that changed (another tad, an edit) is checked again.
        with open(path, "a") as f:
            f.write("# edited\n")
        tad.autodiff(grad_inputs=("x", "w"))(self.stubs.mul.__tad_stub__)(x, w)
        self.assertEqual(len(self.jvps(path)), 2)
        self.assertEqual(len(self.markers()), 2)

    def test_a_wrong_backward_raises_naming_the_input(self):
        for w_factor in (-1.0, 1.01):  # a sign flip; 1% off (float32's tolerance is 1e-4)
            with self.subTest(w_factor=w_factor):
                wrapper = tad.autodiff(grad_inputs=("x", "w"))(self.stubs.mul.__tad_stub__)
                x, w = args()
                path = self.plant(wrapper, (x, w), MUL.format(w_factor=w_factor, tf32=False))
                with self.assertRaises(tad.GradientCheckError) as caught:
                    wrapper(x, w, scale=0.5)
                e = caught.exception
                self.assertIsInstance(e, tad.MismatchError)
                self.assertIsInstance(e, tad.Error)
                self.assertEqual((e.status_name, e.stub, e.module_path), ("TAD_ERR_MISMATCH", "mul", path))
                x_entry, w_entry = e.report["inputs"]
                self.assertEqual((x_entry["name"], x_entry["status"]), ("x", "ok"))
                self.assertEqual((w_entry["name"], w_entry["status"]), ("w", "fail"))
                self.assertGreater(w_entry["rel_err"], w_entry["rtol"])
                self.assertEqual(w_entry["rtol"], _dotcompare.RTOL["float32"])
                message = str(e)
                self.assertTrue(message.startswith("mul: tad's generated backward and its forward mode "
                                                   "disagree on the gradient of w: the gradients of w "
                                                   "cannot be trusted.\n"), message)
                self.assertRegex(message, r"\n  x  float32\[8, 32\]: <J v, u> = \S+, <v, J\^T u> = \S+, "
                                          r"rel err \S+ \(tolerance 0.0001\): ok\n")
                self.assertRegex(message, r"\n  w  float32\[32\]: .*: fail\n")
                self.assertIn("Specialization: x: float32 2-d cpu tensor, w: float32 1-d cpu tensor, "
                              "scale: float.", message)
                self.assertIn(f"Generated module: {path}.\nLater differentiable calls of this "
                              "specialization raise this error again (this process).", message)
                self.assertIn("@tad.autodiff(..., check=False), or TAD_CHECK=0", message)
                # The failure is remembered: raised again, not checked again, never recorded as passed.
                passes = len(self.generated(path).PASSES)
                with self.assertRaisesRegex(tad.GradientCheckError, "gradient of w"):
                    wrapper(*args(seed=9))
                self.assertEqual(len(self.generated(path).PASSES), passes)
                self.assertEqual(self.markers(), [])

    def test_check_off(self):
        x, w = args()
        wrong = MUL.format(w_factor=-1.0, tf32=False)
        path = self.plant(self.stubs.mul_unchecked, (x, w), wrong)
        self.assertFalse(self.stubs.mul_unchecked.check)
        self.stubs.mul_unchecked(x, w)
        self.assertEqual(self.generated(path).PASSES, ["forward"])
        # TAD_CHECK=0 turns it off where the decorator has it on...
        self.set_env("TAD_CHECK", "0")
        path = self.plant(self.stubs.mul, (x, w), wrong)
        self.stubs.mul(x, w)
        self.assertEqual(self.generated(path).PASSES, ["forward"])
        self.assertEqual(self.markers(), [])
        # ... and TAD_CHECK=1 on where it has it off.
        self.set_env("TAD_CHECK", "1")
        unchecked = tad.autodiff(grad_inputs=("x", "w"), check=False)(self.stubs.mul.__tad_stub__)
        with self.assertRaises(tad.GradientCheckError):
            unchecked(x, w)
        for value, expected in (("off", False), ("False", False), ("yes", True), (" ", True), ("", True)):
            self.set_env("TAD_CHECK", value)
            self.assertIs(_check.enabled(True), expected, value)
        self.set_env("TAD_CHECK", "2")
        with self.assertRaisesRegex(ValueError, r"TAD_CHECK='2': expected 0 or 1"):
            tad.autodiff(grad_inputs=("x", "w"))(self.stubs.mul.__tad_stub__)(x, w)
        with self.assertRaisesRegex(TypeError, "check must be True or False"):
            tad.autodiff(grad_inputs=("x",), check="yes")

    def test_no_check_without_gradients(self):
        x, w = args()
        path = self.plant(self.stubs.mul, (x, w), MUL.format(w_factor=-1.0, tf32=False))
        with torch.no_grad():
            self.stubs.mul(x, w)
        self.stubs.mul(*args(requires_grad=False))
        self.assertEqual(self.stubs.CALLS, ["mul", "mul"])  # the stub itself, no module
        self.assertEqual(os.listdir(self.cache), [os.path.basename(path)])
        with self.assertRaises(tad.GradientCheckError):
            self.stubs.mul(x, w)

    def test_the_callers_tensors_are_left_alone(self):
        # update writes x (DIRTY, returned) and stats (not returned) in place: the check's passes
        # write copies, so after the call each holds exactly one update, and no .grad appeared.
        x, w = args()
        x = x.detach()
        stats = torch.zeros(4)
        x0, w0 = x.clone(), w.detach().clone()
        path = self.plant(self.stubs.update, (x, w, stats), UPDATE)
        y = self.stubs.update(x, w, stats)
        self.assertEqual(len(self.jvps(path)), 2)
        self.assertIs(y, x)
        self.assertTrue(torch.equal(x, x0 + torch.tanh(w0)))
        self.assertTrue(torch.equal(stats, torch.ones(4)))
        self.assertTrue(torch.equal(w, w0))
        self.assertIsNone(w.grad)
        y.sum().backward()
        torch.testing.assert_close(w.grad, 8 * (1 - torch.tanh(w0) ** 2))

    def test_random_numbers_are_the_calls_own(self):
        # Each pass draws the mask the call draws; the call draws what it would without the check.
        x = torch.randn(64, requires_grad=True)
        results = []
        for check in (True, False):
            self.set_env("TAD_CHECK", "1" if check else "0")
            wrapper = tad.autodiff(grad_inputs=("x",))(self.stubs.dropout.__tad_stub__)
            path = self.plant(wrapper, (x,), DROPOUT)
            torch.manual_seed(7)
            y = wrapper(x)
            results.append((y.detach(), torch.rand(3)))
            self.assertEqual(len(self.jvps(path)), 1 if check else 0)
        (y1, after1), (y2, after2) = results
        self.assertTrue(torch.equal(y1, y2))
        self.assertTrue(torch.equal(after1, after2))

    def test_module_without_forward_mode_warns_once(self):
        x, w = args()
        self.plant(self.stubs.mul, (x, w), NO_JVP)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y, _ = self.stubs.mul(x, w)
            self.stubs.mul(x, w)
        self.assertEqual(len(caught), 1, [str(c.message) for c in caught])
        self.assertIs(caught[0].category, tad.GradientCheckWarning)
        self.assertEqual(caught[0].filename, __file__)  # points at the call
        message = str(caught[0].message)
        self.assertIn("mul: tad cannot check the generated backward for x: float32 2-d cpu tensor", message)
        self.assertIn("no forward mode (stubs.py:9:5: unsupported construct 'for_begin')", message)
        self.assertIn("check=False", message)
        self.assertIsNotNone(y.grad_fn)
        self.assertEqual(self.markers(), [])
        # Strict users make it an error; a new process warns again.
        with warnings.catch_warnings():
            warnings.simplefilter("error", tad.GradientCheckWarning)
            with self.assertRaises(tad.GradientCheckWarning):
                tad.autodiff(grad_inputs=("x", "w"))(self.stubs.mul.__tad_stub__)(x, w)

    def test_nan_at_the_call_is_inconclusive_and_checked_again(self):
        x, w = args()
        path = self.plant(self.stubs.mul, (x, w), MUL.format(w_factor=1.0, tf32=False))
        bad = x.detach().clone()
        bad[0, 0] = float("nan")
        with self.assertWarnsRegex(tad.GradientCheckWarning, r"could not decide for x, w: both sides .* NaN"):
            self.stubs.mul(bad.requires_grad_(), w)
        self.assertEqual(len(self.jvps(path)), 2)
        self.assertEqual(self.markers(), [])
        self.stubs.mul(x, w)  # checked again, passes, kept
        self.stubs.mul(x, w)
        self.assertEqual(len(self.jvps(path)), 4)
        self.assertEqual(len(self.markers()), 1)

    def test_one_side_not_finite_fails(self):
        x, w = args()
        self.plant(self.stubs.mul, (x, w), MUL.format(w_factor="float('inf')", tf32=False))
        with self.assertRaisesRegex(tad.GradientCheckError, r"<v, J\^T u> = not finite, rel err not finite"):
            self.stubs.mul(x, w)

    def test_an_error_in_the_check_says_where_it_came_from(self):
        x, w = args()
        self.plant(self.stubs.mul, (x, w), MUL.format(w_factor=1.0, tf32=False)
                   + "\n\ndef jvp(*args, tangents, **kwargs):\n    raise MemoryError('out of memory')\n")
        with self.assertRaises(MemoryError) as caught:
            self.stubs.mul(x, w)
        if hasattr(caught.exception, "__notes__"):
            self.assertIn("raised by tad's check of the generated backward of mul on its first use",
                          caught.exception.__notes__[0])


class Run(unittest.TestCase):
    """_check.run and copy_arguments on their own."""

    @staticmethod
    def module(source, **constants):
        module = types.ModuleType("fake_generated")
        exec(source, module.__dict__)
        module.__dict__.update(constants)
        return module

    def run_check(self, module, *call_args):
        bound = inspect.signature(module.forward).bind(*call_args)
        bound.apply_defaults()
        return _check.run(module, bound, "mul", (), "/m.py")

    def test_tolerance_is_the_loosest_dtype_compared(self):
        mul = self.module(MUL.format(w_factor=1.0, tf32=False))
        x, w = args(torch.bfloat16)
        report = self.run_check(mul, x, w.detach().float())
        self.assertEqual(report["status"], "pass", report)
        self.assertEqual([e["rtol"] for e in report["inputs"]], [_dotcompare.RTOL["bfloat16"]] * 2)
        report = self.run_check(mul, *args(torch.float64))
        self.assertEqual([e["rtol"] for e in report["inputs"]], [_dotcompare.RTOL["float64"]] * 2)
        self.assertLess(max(e["rel_err"] for e in report["inputs"]), 1e-12)
        # Kernels multiplying at TF32 precision round float32 like float16.
        report = self.run_check(self.module(MUL.format(w_factor=1.0, tf32=True)), *args())
        self.assertEqual([e["rtol"] for e in report["inputs"]], [_dotcompare.RTOL["float16"]] * 2)

    def test_entries_are_the_workers_comparison(self):
        report = self.run_check(self.module(MUL.format(w_factor=1.0, tf32=False)), *args())
        self.assertEqual((report["stub"], report["module"], report["seed"]), ("mul", "/m.py", _check.SEED))
        for e in report["inputs"]:
            self.assertEqual(set(e), {"name", "dtype", "shape", "status", "jvp", "vjp", "rel_err", "rtol",
                                      "ok", "probes"})
            self.assertNotEqual(e["jvp"], 0.0)
        # The packaged comparison is the worker's file, copied by setup.py.
        with open(os.path.join(_support.REPO, "src", "runtime", "python", "tad_dotcompare.py")) as f:
            worker = f.read()
        with open(_dotcompare.__file__) as f:
            self.assertEqual(f.read(), worker)

    def test_a_weak_draw_is_followed_by_another(self):
        mul = self.module(MUL.format(w_factor=1.0, tf32=False))
        for weak, probes in ((0.0, 1), (1.01, _check.MAX_PROBES)):  # every draw weak at 1.01
            with self.subTest(weak=weak):
                saved = _check.WEAK
                _check.WEAK = weak
                try:
                    report = self.run_check(mul, *args())
                finally:
                    _check.WEAK = saved
                self.assertEqual([e["probes"] for e in report["inputs"]], [probes, probes])
                self.assertEqual(len([p for p in mul.PASSES if p != "forward"]), 2 * probes)
                mul.PASSES.clear()

    def test_a_sign_flip_is_caught_at_the_loosest_tolerance_whatever_the_seed(self):
        # TF32 float32: float16's tolerance, 2e-2, where one draw of v would miss a flip about one
        # time in 120; in float16 itself Debian's CPU torch lacks tanh.
        flipped = self.module(MUL.format(w_factor=-1.0, tf32=True))
        x, w = args()
        bound = inspect.signature(flipped.forward).bind(x, w)
        bound.apply_defaults()
        probes = []
        for seed in range(300):
            [_, entry] = _check.run(flipped, bound, seed=seed)["inputs"]
            self.assertEqual(entry["status"], "fail", (seed, entry))
            probes.append(entry["probes"])
        self.assertGreater(max(probes), 1)  # some first draws were weak and were followed up

    def test_an_optional_gradient_input_left_out_is_not_checked(self):
        module = self.module(OPTIONAL)
        report = self.run_check(module, args()[0])
        self.assertEqual((report["status"], [e["name"] for e in report["inputs"]]), ("pass", ["x"]))

    def test_a_module_without_jvp_is_unchecked(self):
        report = self.run_check(self.module(NO_JVP), *args())
        self.assertEqual((report["status"], report["reason"]),
                         ("unchecked", "stubs.py:9:5: unsupported construct 'for_begin'"))

    def test_copies_keep_layout_and_aliasing(self):
        def stub(a, b, c, d, e, n):
            pass
        base = torch.arange(20.0)
        a = torch.randn(6, 4).t()  # strided
        c, d = base[:10], base[5:]  # overlapping views of one buffer
        bound = inspect.signature(stub).bind(a, a, c, d, torch.arange(3), 4)
        copy = _check.copy_arguments(bound)
        ca, cb, cc, cd, ce, n = copy.args
        self.assertIs(ca, cb)
        self.assertEqual((ca.shape, ca.stride()), (a.shape, a.stride()))
        self.assertTrue(torch.equal(ca, a) and torch.equal(cc, c) and torch.equal(cd, d))
        self.assertEqual(n, 4)
        self.assertTrue(torch.equal(ce, torch.arange(3)))
        cc[7] = -1.0  # element 7 of c is element 2 of d, in the copies only
        self.assertEqual(float(cd[2]), -1.0)
        self.assertEqual(float(base[7]), 7.0)
        ca.zero_()
        self.assertNotEqual(float(a.abs().sum()), 0.0)


class Frontend(unittest.TestCase):
    def test_the_compiler_reads_a_decorator_with_check(self):
        with open(os.path.join(_support.EXAMPLES, "gelu.py")) as f:
            source = f.read().replace('@tad.autodiff(grad_inputs=("x",))',
                                      '@tad.autodiff(grad_inputs=("x",), check=False)')
        self.assertIn("check=False", source)
        tmp = tempfile.mkdtemp(prefix="tad-check-")
        self.addCleanup(shutil.rmtree, tmp, True)
        with tad.Session(work_dir=os.path.join(tmp, "work")) as session:
            session.load_forward(os.path.join(tmp, "gelu.py"), source=source)


class GpuCheck(CheckCase):
    """examples/gelu.py through @tad.autodiff with the check on: real jvp and backward kernels."""

    def setUp(self):
        reason = _support.gpu_unavailable_reason()
        if reason:
            _support.skip(self, f"the first-use check of real kernels needs a GPU: {reason}")
        super().setUp()

    def test_gelu(self):
        gelu = _support.import_file(os.path.join(_support.EXAMPLES, "gelu.py")).gelu
        self.assertTrue(gelu.check)
        for dtype in (torch.float32, torch.float16):
            with self.subTest(dtype=dtype):
                x = torch.randn(4097, device="cuda", dtype=dtype, requires_grad=True)
                y = gelu(x)
                dy = torch.randn_like(y)
                (got,) = torch.autograd.grad(y, x, dy)
                xr = x.detach().float().requires_grad_()
                (want,) = torch.autograd.grad(torch.nn.functional.gelu(xr), xr, dy.float())
                tol = 1e-5 if dtype == torch.float32 else 2e-3
                torch.testing.assert_close(got.float(), want, rtol=tol, atol=tol)
        records = []
        for marker in self.markers():
            with open(marker) as f:
                records.append(json.load(f))
        self.assertEqual(sorted(r["inputs"][0]["dtype"] for r in records), ["float16", "float32"])
        for r in records:
            [entry] = r["inputs"]
            self.assertEqual((r["status"], entry["name"], entry["status"]), ("pass", "x", "ok"), r)
            self.assertLess(entry["rel_err"], entry["rtol"])
            print(f"\n[gelu check] {entry['dtype']}: <J v, u> = {entry['jvp']:.6g}, <v, J^T u> = "
                  f"{entry['vjp']:.6g}, rel err {entry['rel_err']:.2e} (tolerance {entry['rtol']:g}), "
                  f"{r['seconds'] * 1e3:.1f} ms; {r['environment']}", file=sys.stderr)
        # The float32 module with its backward's sign flipped (jvp untouched): a new process checks
        # the changed file again and refuses it.
        [path] = {r["module"] for r in records if r["inputs"][0]["dtype"] == "float32"}
        with open(path, "a") as f:
            f.write(TAMPER)
        again = tad.autodiff(grad_inputs=("x",))(gelu.__tad_stub__)
        x = torch.randn(4097, device="cuda", requires_grad=True)
        with self.assertRaisesRegex(tad.GradientCheckError, "disagree on the gradient of x") as caught:
            again(x)
        [entry] = caught.exception.report["inputs"]
        self.assertEqual(entry["status"], "fail")
        self.assertGreater(entry["rel_err"], 100 * entry["rtol"])
        self.assertIsNone(x.grad)


TAMPER = '''

class _FlipGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y):
        return y.view_as(y)

    @staticmethod
    def backward(ctx, dy):
        return -dy


_untampered_forward = forward


def forward(*args, **kwargs):
    return _FlipGradient.apply(_untampered_forward(*args, **kwargs))
'''


if __name__ == "__main__":
    unittest.main()

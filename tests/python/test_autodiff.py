"""@tad.autodiff: unwrapping, specialization keys, the no-grad fast path and the module cache."""

import glob
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

import _support
import torch

import tad
from tad import _autodiff, _trace

STUB_FILE = '''\
import tad

CALLS = []


@tad.autodiff(grad_inputs=("x",))
def scale(x, y=None, factor=2.0):
    """Doc of scale."""
    CALLS.append(1)
    return x
'''

FAKE_GENERATED = '''\
GRAD_INPUTS = ("x",)
TOKEN = object()  # a fresh one each time the file is executed


def forward(x, y=None, factor=2.0):
    return TOKEN, x, factor


def jvp(x, y=None, factor=2.0, *, tangents):  # what the first-use check runs (test_check.py)
    return forward(x, y, factor), (None, tangents["x"], None)
'''


class CacheDir(unittest.TestCase):
    """A private $TAD_CACHE_DIR and a stub file per test."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tad-py-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.cache = os.path.join(self.tmp, "cache")
        saved = os.environ.get("TAD_CACHE_DIR")
        os.environ["TAD_CACHE_DIR"] = self.cache
        self.addCleanup(self.restore_env, "TAD_CACHE_DIR", saved)
        self.stub_path = os.path.join(self.tmp, "stubs.py")
        with open(self.stub_path, "w") as f:
            f.write(STUB_FILE)
        self.module = _support.import_file(self.stub_path)
        self.scale = self.module.scale
        self.raw = self.scale.__tad_stub__

    @staticmethod
    def restore_env(name, value):
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


class Decorator(CacheDir):
    def test_wrapper_carries_the_raw_stub(self):
        self.assertTrue(inspect.isfunction(self.raw))
        self.assertFalse(hasattr(self.raw, "__tad_stub__"))
        self.assertIsNot(self.scale, self.raw)
        self.assertIs(self.scale.__wrapped__, self.raw)
        self.assertEqual(self.scale.__name__, "scale")
        self.assertEqual(self.scale.__doc__, "Doc of scale.")
        self.assertEqual(self.scale.__module__, self.module.__name__)
        self.assertEqual(self.scale.grad_inputs, ("x",))
        # The worker and the tracer unwrap the same way.
        self.assertIs(_trace.find_stub(self.module, "scale"), self.raw)

    def test_grad_inputs_are_checked_against_the_signature(self):
        def stub(x, w, eps=1e-5):
            return x

        self.assertEqual(tad.autodiff(grad_inputs="x")(stub).grad_inputs, ("x",))
        self.assertEqual(tad.autodiff(grad_inputs=["x", "w"])(stub).grad_inputs, ("x", "w"))
        for bad in (("x", "nope"), (), ("x", "x")):
            with self.subTest(bad=bad), self.assertRaisesRegex(ValueError, "grad_inputs"):
                tad.autodiff(grad_inputs=bad)(stub)
        with self.assertRaises(TypeError):
            tad.autodiff()(stub)


class Key(CacheDir):
    def key(self, *args, **kwargs):
        return _autodiff.specialization_key(inspect.signature(self.raw), args, kwargs)

    def test_entries(self):
        x = torch.zeros(2, 3)
        self.assertEqual(self.key(x), (("x", "tensor", "float32", 2, "cpu"),
                                       ("y", "builtins.NoneType"), ("factor", "builtins.float")))

    def test_call_spelling_does_not_matter(self):
        x = torch.zeros(2, 3)
        self.assertEqual(self.key(x), self.key(x=x))
        self.assertEqual(self.key(x), self.key(x, None, 2.0))
        self.assertEqual(self.key(x), self.key(x, factor=7.5))  # values are not in the key
        self.assertEqual(self.key(x), self.key(torch.ones(9, 1)))  # nor are shapes

    def test_what_changes_the_key(self):
        x = torch.zeros(2, 3)
        base = self.key(x)
        for other in (self.key(x.double()), self.key(x.reshape(6)),
                      self.key(torch.zeros(2, 3, device="meta")), self.key(x, factor=2),
                      self.key(x, torch.zeros(2, 3))):
            self.assertNotEqual(other, base)


class FastPath(CacheDir):
    """Calls needing no gradient run the stub itself and never touch the library or the cache."""

    def test_no_tensor_requires_grad(self):
        x = torch.randn(3)
        self.assertIs(self.scale(x, factor=3.0), x)
        self.assertEqual(len(self.module.CALLS), 1)
        self.assertFalse(os.path.exists(self.cache))

    def test_grad_disabled(self):
        x = torch.randn(3, requires_grad=True)
        with torch.no_grad():
            self.assertIs(self.scale(x), x)
        self.assertEqual(len(self.module.CALLS), 1)
        self.assertFalse(os.path.exists(self.cache))

    def test_no_tensor_at_all(self):
        self.assertEqual(self.scale(5), 5)
        self.assertEqual(len(self.module.CALLS), 1)

    def test_tensor_outside_grad_inputs_requiring_grad_is_refused(self):
        with self.assertRaisesRegex(ValueError, r"scale: y require\(s\) grad but grad_inputs is"):
            self.scale(torch.randn(3), torch.randn(3, requires_grad=True))
        self.assertEqual(self.module.CALLS, [])


class Cache(CacheDir):
    def key(self, x):
        return _autodiff.specialization_key(inspect.signature(self.raw), (x,), {})

    def plant(self, x, text=FAKE_GENERATED):
        path = _autodiff.cache_file(self.raw, self.key(x))
        _autodiff.write_atomically(path, text)
        return path

    def test_cache_file_name(self):
        x = torch.randn(3)
        path = _autodiff.cache_file(self.raw, self.key(x))
        self.assertEqual(os.path.dirname(path), self.cache)
        self.assertRegex(os.path.basename(path), r"^[0-9a-f]{64}\.py$")
        self.assertEqual(path, _autodiff.cache_file(self.raw, self.key(torch.randn(5))))
        self.assertNotEqual(path, _autodiff.cache_file(self.raw, self.key(x.double())))
        with open(self.stub_path, "a") as f:
            f.write("\n# edited\n")
        self.assertNotEqual(path, _autodiff.cache_file(self.raw, self.key(x)))

    def test_default_cache_dir_is_under_home(self):
        os.environ.pop("TAD_CACHE_DIR")
        saved = os.environ.get("HOME")
        os.environ["HOME"] = self.tmp
        self.addCleanup(self.restore_env, "HOME", saved)
        self.assertEqual(_autodiff.cache_dir(), os.path.join(self.tmp, ".cache", "tad"))

    def test_cached_module_serves_calls(self):
        x = torch.randn(3, requires_grad=True)
        self.plant(x)
        token, out, factor = self.scale(x)
        self.assertIs(out, x)
        self.assertEqual(factor, 2.0)
        self.assertEqual(self.module.CALLS, [], "the generated forward replaces the stub")
        # Later calls use the module kept in memory: the file is not executed again.
        self.assertIs(self.scale(torch.randn(4, requires_grad=True))[0], token)
        # A fresh wrapper (as in a new process) loads the file from disk.
        again = tad.autodiff(grad_inputs=("x",))(self.raw)
        self.assertIsNot(again(x)[0], token)
        # The cache holds the module and the record of its first-use check (test_check.py).
        module = os.path.basename(self.plant(x))
        files = os.listdir(self.cache)
        self.assertIn(module, files)
        [marker] = [f for f in files if f != module]
        self.assertRegex(marker, rf"^{module[:-3]}\.[0-9a-f]{{16}}\.checked\.json$")

    def test_a_file_without_the_contract_is_rejected(self):
        x = torch.randn(3, requires_grad=True)
        self.plant(x, "def forward(*args):\n    return None\n")
        with self.assertRaisesRegex(tad.InternalError, "GRAD_INPUTS"):
            self.scale(x)

    def test_write_atomically_replaces_and_leaves_no_temp(self):
        path = os.path.join(self.cache, "sub", "m.py")
        _autodiff.write_atomically(path, "A = 1\n")
        _autodiff.write_atomically(path, "A = 2\n")
        with open(path) as f:
            self.assertEqual(f.read(), "A = 2\n")
        self.assertEqual(os.listdir(os.path.dirname(path)), ["m.py"])

    def test_stub_without_a_file(self):
        namespace = {"tad": tad}
        exec("@tad.autodiff(grad_inputs=('x',))\ndef f(x):\n    return x\n", namespace)
        with self.assertRaisesRegex(tad.FileError, "is not defined in a file"):
            _autodiff.forward_file(namespace["f"].__tad_stub__)


def layernorm_args(device, requires_grad=True):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 48, generator=g).to(device)
    w = (1.0 + 0.1 * torch.randn(48, generator=g)).to(device)
    b = (0.1 * torch.randn(48, generator=g)).to(device)
    return [t.requires_grad_(requires_grad) for t in (x, w, b)]


class Pipeline(CacheDir):
    """The first differentiable call traces, generates, caches; needs the compiler (and for real
    kernels a GPU)."""

    def test_first_call_generates_and_caches_on_cpu(self):
        if not _support.STANDIN_TRITON:
            _support.skip(self, "real triton is installed: test_layernorm_on_gpu covers this")
        layernorm = _support.import_file(os.path.join(_support.EXAMPLES, "layernorm.py")).layernorm
        # Everything up to running the generated kernels works here; the stand-in cannot run them.
        with self.assertRaisesRegex(RuntimeError, "stand-in for triton cannot run kernels"):
            layernorm(*layernorm_args("cpu"))
        [path] = glob.glob(os.path.join(self.cache, "*.py"))
        generated = _autodiff.import_generated(path)
        self.assertEqual(tuple(generated.GRAD_INPUTS), ("x", "weight", "bias"))
        self.assertEqual(len(os.listdir(os.path.join(self.cache, "work", "snapshots"))), 1)

    def test_torch_code_on_a_kernel_output_is_differentiated(self):
        # The stub sums the kernel's output with torch: the trace runs under autograd, so the
        # library sees the op and makes the launch its own autograd node; autograd differentiates
        # the sum (docs/stub-autograd.md).
        if not _support.STANDIN_TRITON and _support.gpu_unavailable_reason():
            _support.skip(self, "real triton without a GPU cannot trace the stub")
        device = "cpu" if _support.STANDIN_TRITON else "cuda"
        path = os.path.join(_support.REPO, "tests", "pipeline", "data", "torch_code", "sum_output.py")
        stub = _support.import_file(path).column_sum_of_squares
        x = torch.randn(4, 32, device=device, requires_grad=True)
        if _support.STANDIN_TRITON:
            # Everything up to running the kernels works here; the stand-in cannot run them.
            with self.assertRaisesRegex(RuntimeError, "stand-in for triton cannot run kernels"):
                stub(x)
        else:
            y = stub(x)
            torch.testing.assert_close(y, (x * x).sum(0))
            y.backward(torch.ones_like(y))
            torch.testing.assert_close(x.grad, 2 * x.detach())
        [path] = glob.glob(os.path.join(self.cache, "*.py"))
        generated = _autodiff.import_generated(path)
        self.assertTrue(issubclass(generated._LaunchFunction, torch.autograd.Function))
        self.assertIn("each launch is its own autograd node", generated.JVP_UNSUPPORTED)
        with self.assertRaisesRegex(NotImplementedError, "forward mode is not generated"):
            generated.jvp(x)

    def test_layernorm_on_gpu(self):
        reason = _support.gpu_unavailable_reason()
        if reason:
            _support.skip(self, f"autodiff with real kernels needs a GPU: {reason}")
        path = os.path.join(_support.EXAMPLES, "layernorm.py")
        layernorm = _support.import_file(path).layernorm
        x, w, b = layernorm_args("cuda")
        y = layernorm(x, w, b, eps=1e-5)
        self.assertIsNotNone(y.grad_fn)
        dy = torch.randn_like(y)
        got = torch.autograd.grad(y, (x, w, b), dy)
        xr, wr, br = [t.detach().clone().requires_grad_() for t in (x, w, b)]
        yr = torch.nn.functional.layer_norm(xr, (48,), wr, br, 1e-5)
        want = torch.autograd.grad(yr, (xr, wr, br), dy)
        torch.testing.assert_close(y, yr, rtol=1e-4, atol=1e-4)
        for g, r in zip(got, want):
            torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-4)
        snapshots = os.path.join(self.cache, "work", "snapshots")
        self.assertEqual(len(os.listdir(snapshots)), 1)
        layernorm(*layernorm_args("cuda")).sum().backward()  # same key: no new generation
        self.assertEqual(len(os.listdir(snapshots)), 1)
        # A new process finds the cached module and generates nothing either.
        script = textwrap.dedent(f"""
            import sys, torch
            sys.path.insert(0, {_support.HERE!r})
            import _support
            m = _support.import_file({path!r})
            x = torch.randn(8, 48, device="cuda", requires_grad=True)
            w = torch.ones(48, device="cuda", requires_grad=True)
            b = torch.zeros(48, device="cuda", requires_grad=True)
            m.layernorm(x, w, b).sum().backward()
            assert x.grad is not None and w.grad is not None
        """)
        subprocess.run([sys.executable, "-c", script], check=True, env=dict(os.environ))
        self.assertEqual(len(os.listdir(snapshots)), 1)


if __name__ == "__main__":
    unittest.main()

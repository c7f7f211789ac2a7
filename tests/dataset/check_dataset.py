"""Checks every forward file in dataset/ on the CPU, without triton.

Per file: it imports under tad's stand-in triton with a minimal `tad`; follows the input convention
(SWEEP, make_args, grad_inputs, bytes/flops); reference() is differentiable; tad's tracer sees the
stub launch the file's own kernels; and the kernels, run by tile_emulator on the first two SWEEP
entries, match reference() (dropout, which has none, is checked against its own mask), including
the buffers they save but do not return.

Run: /usr/bin/python3 tests/dataset/check_dataset.py (ctest: dataset_forward_cpu; exit 77 without
torch, a skip).
"""

import glob
import importlib.util
import inspect
import math
import os
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RUNTIME = os.path.join(ROOT, "src", "runtime", "python")
sys.path.insert(0, HERE)
sys.path.insert(0, RUNTIME)
sys.path.insert(0, os.path.join(RUNTIME, "standin"))

try:
    import torch  # noqa: E402
except ImportError:
    print("[SKIP] python3 cannot import torch: the dataset's forward checks need CPU torch")
    sys.exit(77)

import tad_trace  # noqa: E402
import tile_emulator  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

FILES = sorted(glob.glob(os.path.join(ROOT, "dataset", "*.py")))
SMALL_ELEMENTS = 50_000   # the first two SWEEP entries must stay cheap for a CPU interpreter
_registered = []          # (stub, grad_inputs), appended by the tad shim as files import


def _install_tad():
    shim = types.ModuleType("tad", "test shim: @tad.autodiff records the stub, returns it as is")

    def autodiff(fn=None, grad_inputs=()):
        def mark(f):
            _registered.append((f, tuple(grad_inputs)))
            return f
        return mark if fn is None else mark(fn)

    shim.autodiff = autodiff
    sys.modules["tad"] = shim


def _load(path):
    name = "dataset_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    start = len(_registered)
    spec.loader.exec_module(module)
    return module, _registered[start:]


def _cpu_dims(dims, dtype="float32"):
    return {**dims, "device": "cpu", "dtype": dtype}


def _outputs(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _grad_names(stub, grad_inputs):
    params = list(inspect.signature(stub).parameters)
    return [params[g] if isinstance(g, int) else g for g in grad_inputs]


def _bound(stub, args, kwargs):
    bound = inspect.signature(stub).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments


def _close(test, got, want, rtol, what):
    test.assertEqual(tuple(got.shape), tuple(want.shape), what)
    got, want = got.detach().double(), want.detach().double()
    test.assertFalse(bool(torch.isnan(got).any()), f"{what}: NaN")
    err = (got - want).abs().max().item() if got.numel() else 0.0
    scale = max(want.abs().max().item() if want.numel() else 0.0, 1e-30)
    test.assertLessEqual(err / scale, rtol, f"{what}: max error {err:.3g} vs scale {scale:.3g}")


# Buffers that a stub saves for its backward but does not return: kernel argument name -> its
# expected value, from the stub's arguments (float64).
def _saved_rmsnorm(a):
    x = a["x"]
    return {"Rstd": torch.rsqrt(x.pow(2).mean(-1) + a["eps"])}


def _saved_cross_entropy(a):
    return {"Lse": torch.logsumexp(a["logits"], -1)}


def _saved_group_norm(a):
    x = a["x"].reshape(a["x"].shape[0], a["num_groups"], -1)
    return {"Mean": x.mean(-1), "Rstd": torch.rsqrt(x.var(-1, unbiased=False) + a["eps"])}


def _saved_add_layernorm(a):
    h = a["x"] + a["residual"]
    return {"Mean": h.mean(-1), "Rstd": torch.rsqrt(h.var(-1, unbiased=False) + a["eps"])}


def _saved_flash_attention(a):
    s = a["q"] @ a["k"].transpose(-1, -2) * a["sm_scale"]
    if a["causal"]:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return {"L": torch.logsumexp(s, -1)}


def _saved_layernorm_multi_row(a):
    x = a["x"]
    return {"Mean": x.mean(-1), "Rstd": torch.rsqrt(x.var(-1, unbiased=False) + a["eps"])}


def _saved_batch_norm_train(a):
    # The running statistics are updated in place from the values the stub was given.
    x, m = a["x"], a["momentum"]
    mean, var = x.mean((0, 2)), x.var((0, 2), unbiased=False)
    count = x.shape[0] * x.shape[2]
    return {"Mean": mean, "Rstd": torch.rsqrt(var + a["eps"]),
            "RunMean": (1 - m) * a["running_mean"] + m * mean,
            "RunVar": (1 - m) * a["running_var"] + m * var * count / (count - 1)}


SAVED = {"rmsnorm": _saved_rmsnorm, "cross_entropy": _saved_cross_entropy,
         "group_norm": _saved_group_norm, "add_layernorm": _saved_add_layernorm,
         "flash_attention": _saved_flash_attention, "rmsnorm_persistent": _saved_rmsnorm,
         "layernorm_multi_row": _saved_layernorm_multi_row,
         "batch_norm_train": _saved_batch_norm_train}

# Kernels whose fp32 tl.dot runs as TF32 on a GPU are exact here; the rest differ only by fp32
# rounding order.
RTOL = {"float32": 2e-5, "float16": 2e-2}


class DatasetFile:
    """Mixin; one subclass per file sets PATH."""

    PATH = None

    @classmethod
    def setUpClass(cls):
        cls.module, cls.stubs = _load(cls.PATH)
        cls.stem = os.path.splitext(os.path.basename(cls.PATH))[0]

    def setUp(self):
        torch.manual_seed(0)

    def stub(self):
        self.assertEqual(len(self.stubs), 1, "exactly one @tad.autodiff stub")
        return self.stubs[0]

    def small(self):
        sweep = self.module.SWEEP
        return sweep[:2]

    def test_convention(self):
        stub, grad_inputs = self.stub()
        self.assertTrue(grad_inputs, "grad_inputs is empty")
        params = list(inspect.signature(stub).parameters)
        for g in grad_inputs:
            if isinstance(g, int):
                self.assertLess(g, len(params))
            else:
                self.assertIn(g, params, f"grad input {g!r} is not a stub parameter")
        sweep = self.module.SWEEP
        self.assertIsInstance(sweep, list)
        self.assertGreaterEqual(len(sweep), 3, "two small entries, then GPU sizes")
        for dims in sweep:
            self.assertIsInstance(dims, dict)
        metric = getattr(self.module, "flops", None) or getattr(self.module, "bytes", None)
        self.assertTrue(callable(metric), "bytes() or flops()")
        for dims in sweep:
            for mode in ("fwd", "bwd"):
                value = metric(dict(dims), mode)
                self.assertIsInstance(value, int)
                self.assertGreater(value, 0)
        for dims in self.small():
            args, kwargs = self.module.make_args(_cpu_dims(dims))
            tensors = [v for v in _bound(stub, args, kwargs).values() if torch.is_tensor(v)]
            self.assertTrue(all(t.device.type == "cpu" for t in tensors))
            # An optional grad input (a bias) may be None in some entries.
            present = [n for n in _grad_names(stub, grad_inputs)
                       if _bound(stub, args, kwargs)[n] is not None]
            for name in present:
                value = _bound(stub, args, kwargs)[name]
                self.assertTrue(torch.is_tensor(value) and value.dtype == torch.float32,
                                f"{name} must be a float32 tensor for dtype float32")
            half_args, _ = self.module.make_args(_cpu_dims(dims, "float16"))
            for name in present:
                self.assertEqual(_bound(stub, half_args, kwargs)[name].dtype, torch.float16)

    def test_reference_differentiable(self):
        stub, grad_inputs = self.stub()
        reference = getattr(self.module, "reference", None)
        if reference is None:
            self.assertEqual(self.stem, "dropout", "only dropout goes without reference()")
            return
        names = _grad_names(stub, grad_inputs)
        for dims in self.small():
            args, kwargs = self.module.make_args(_cpu_dims(dims))
            arguments = _bound(stub, args, kwargs)
            given = [n for n in names if arguments[n] is not None]
            for name in given:
                arguments[name] = arguments[name].detach().double().requires_grad_()
            outs = _outputs(reference(**arguments))
            loss = sum((o * torch.randn_like(o)).sum() for o in outs if o.requires_grad)
            loss.backward()
            for name in given:
                grad = arguments[name].grad
                self.assertIsNotNone(grad, f"{dims}: no gradient for {name}")
                self.assertTrue(bool(torch.isfinite(grad).all()), f"{dims}: {name} grad")
                self.assertGreater(grad.abs().max().item(), 0.0, f"{dims}: {name} grad is 0")

    def test_trace(self):
        stub, _ = self.stub()
        jit_names = {tad_trace.base_fn(v, tad_trace.kernel_classes()).__name__
                     for v in vars(self.module).values()
                     if isinstance(v, triton.KernelInterface)}
        for dims in self.small():
            args, kwargs = self.module.make_args(_cpu_dims(dims))
            outputs, record = tad_trace.trace_call(self.module, stub, args, kwargs)
            self.assertTrue(record["launches"], "no launch recorded")
            tensors = [v for v in _bound(stub, args, kwargs).values() if torch.is_tensor(v)]
            total = sum(t.numel() for t in tensors + _outputs(outputs))
            self.assertLess(total, SMALL_ELEMENTS, f"{dims}: {total} input and output elements")
            for launch in record["launches"]:
                self.assertIn(launch["kernel"], jit_names)
                self.assertTrue(all(g >= 1 for g in launch["grid"]), launch["grid"])
            reference = getattr(self.module, "reference", None)
            if reference is not None:
                ref = _outputs(reference(*args, **kwargs))
                got = _outputs(outputs)
                self.assertEqual(len(got), len(ref), "stub and reference output counts")
                for g, r in zip(got, ref):
                    self.assertEqual((tuple(g.shape), g.dtype), (tuple(r.shape), r.dtype))

    def _emulate(self, dtype):
        stub, _ = self.stub()
        for dims in self.small():
            args, kwargs = self.module.make_args(_cpu_dims(dims, dtype))
            # The inputs as the stub got them: a stub may update its inputs in place.
            before = [a.clone() if torch.is_tensor(a) else a for a in args]
            with tile_emulator.emulate() as launches:
                got = _outputs(stub(*args, **kwargs))
            yield dims, before, kwargs, got, launches

    def test_forward_float32(self):
        self._check_forward("float32")

    def test_forward_float16(self):
        self._check_forward("float16")

    def _check_forward(self, dtype):
        stub, _ = self.stub()
        for dims, args, kwargs, got, launches in self._emulate(dtype):
            if self.stem == "dropout":
                self._check_dropout(dims, args[0], kwargs["p"], got, dtype)
                continue
            as64 = {k: (v.double() if torch.is_tensor(v) and v.is_floating_point() else v)
                    for k, v in _bound(stub, args, kwargs).items()}
            want = _outputs(self.module.reference(**as64))
            for i, (g, w) in enumerate(zip(got, want)):
                _close(self, g, w, RTOL[dtype], f"{dims} {dtype} output {i}")
            saved = SAVED.get(self.stem)
            if saved is not None:
                kernel_args = launches[-1][1]
                for name, value in saved(as64).items():
                    _close(self, kernel_args[name].reshape(value.shape), value,
                           max(RTOL[dtype], 1e-5), f"{dims} {dtype} saved {name}")

    def _check_dropout(self, dims, x, p, got, dtype):
        y, keep = got
        self.assertTrue(bool(((keep == 0) | (keep == 1)).all()))
        want = torch.where(keep.bool(), x.double() / (1 - p), torch.zeros((), dtype=torch.float64))
        _close(self, y, want, RTOL[dtype], f"{dims} {dtype} y")
        kept = keep.double().mean().item()
        self.assertLess(abs(kept - (1 - p)), 5 / math.sqrt(x.numel()), f"kept {kept}, p {p}")


_install_tad()
for _path in FILES:
    _stem = os.path.splitext(os.path.basename(_path))[0]
    globals()[f"Test_{_stem}"] = type(f"Test_{_stem}", (DatasetFile, unittest.TestCase),
                                      {"PATH": _path})


@triton.jit
def _copy(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)


@triton.jit
def _copy_unmasked(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs))


@triton.jit
def _copy_racy(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)


class EmulatorSelfTest(unittest.TestCase):
    """The emulator must catch the bugs it claims to, or the forward checks above prove little."""

    def setUp(self):
        self.x = torch.randn(100)
        self.y = torch.zeros(100)

    def test_runs_a_kernel(self):
        with tile_emulator.emulate() as launches:
            _copy[(4,)](self.x, self.y, 100, BLOCK=32)
        self.assertTrue(torch.equal(self.x, self.y))
        self.assertEqual(launches[0][0], "_copy")

    def test_unmasked_tail_is_out_of_bounds(self):
        with self.assertRaisesRegex(AssertionError, "outside its tensor"):
            with tile_emulator.emulate():
                _copy_unmasked[(4,)](self.x, self.y, 100, BLOCK=32)

    def test_two_programs_storing_one_element_race(self):
        with self.assertRaisesRegex(AssertionError, "race"):
            with tile_emulator.emulate():
                _copy_racy[(2,)](self.x, self.y, 100, BLOCK=32)

    def test_arange_needs_a_power_of_two(self):
        with self.assertRaisesRegex(AssertionError, "power-of-two"):
            with tile_emulator.emulate():
                _copy[(4,)](self.x, self.y, 100, BLOCK=30)


class DatasetSize(unittest.TestCase):
    def test_at_least_sixteen_files(self):
        self.assertGreaterEqual(len(FILES), 16)


if __name__ == "__main__":
    unittest.main()

"""The dot-product test <J v, u> = <v, J^T u> of tad_dotcheck, run on the CPU with pure-torch stand-ins
for a generated module's forward (autograd) and jvp (written by hand): no GPU numbers here, only
that the check computes both sides, passes a consistent pair and fails an inconsistent one."""

import inspect
import os
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(HERE, "..", "..", "src", "runtime", "python")
sys.path[:0] = [os.path.join(PYDIR, "standin"), PYDIR]

import torch  # noqa: E402

import tad_dotcheck  # noqa: E402
import tad_verify  # noqa: E402


def stub(x, w, scale=2.0):
    return torch.tanh(x) * w * scale, (x * x).sum()


def make_jvp(factor=1.0):
    """jvp(*args, tangents, **kwargs) as a generated module has it, by hand: y = tanh(x) w scale,
    s = sum(x^2); factor != 1 makes the tangent of s wrong."""
    def jvp(x, w, scale=2.0, *, tangents):
        dx = tangents.get("x", torch.zeros_like(x))
        dw = tangents.get("w", torch.zeros_like(w))
        t = torch.tanh(x)
        dy = ((1 - t * t) * dx * w + t * dw) * scale
        ds = (2 * x * dx).sum() * factor
        return stub(x, w, scale), (dy, ds)
    return jvp


def bound_args(dtype, n=32):
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(8, n, generator=gen, dtype=torch.float64).to(dtype)
    w = torch.randn(n, generator=gen, dtype=torch.float64).to(dtype)
    return inspect.signature(stub).bind(x, w, scale=0.5)


class Compare(unittest.TestCase):
    def test_equal_sums_pass(self):
        t = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64)
        entry = tad_dotcheck.compare([t], [t.flip(0)], 1e-12)
        self.assertEqual((entry["jvp"], entry["vjp"], entry["rel_err"], entry["ok"]), (2.0, 2.0, 0.0, True))

    def test_cancelling_sum_is_scaled_by_its_terms(self):
        # Both sums are ~0 by cancellation: the error is relative to the terms' root sum of squares.
        a = torch.tensor([1.0, -1.0 + 1e-12], dtype=torch.float64)
        b = torch.tensor([1.0, -1.0], dtype=torch.float64)
        entry = tad_dotcheck.compare([a], [b], 1e-9)
        self.assertLess(entry["rel_err"], 1e-11)
        self.assertTrue(entry["ok"])

    def test_wrong_sign_fails_and_nan_is_null(self):
        t = torch.tensor([1.0, 2.0], dtype=torch.float64)
        self.assertFalse(tad_dotcheck.compare([t], [-t], 1e-2)["ok"])
        nan = tad_dotcheck.compare([t * float("nan")], [t], 1e-2)
        self.assertEqual((nan["jvp"], nan["rel_err"], nan["ok"]), (None, None, False))


class DotProduct(unittest.TestCase):
    def test_consistent_modes_pass_in_every_dtype(self):
        for dtype in (torch.float64, torch.float32):
            name = str(dtype).split(".")[1]
            entry = tad_dotcheck.dot_product(stub, make_jvp(), bound_args(dtype), ["x", "w"], 3,
                                             tad_dotcheck.RTOL[name])
            self.assertTrue(entry["ok"], (name, entry))
            self.assertNotEqual(entry["jvp"], 0.0)
        entry = tad_dotcheck.dot_product(stub, make_jvp(), bound_args(torch.float64), ["x", "w"],
                                         3, 1e-12)
        self.assertLess(entry["rel_err"], 1e-12)

    def test_wrong_jvp_fails(self):
        # 1% off in one output's tangent: far beyond float32's tolerance.
        entry = tad_dotcheck.dot_product(stub, make_jvp(1.01), bound_args(torch.float32), ["x", "w"],
                                         3, tad_dotcheck.RTOL["float32"])
        self.assertFalse(entry["ok"], entry)
        self.assertGreater(entry["rel_err"], 1e-3)

    def test_forward_mode_out_of_shared_memory_skips_the_test_and_says_why(self):
        class OutOfResources(Exception):
            pass

        def jvp(x, w, scale=2.0, *, tangents):
            raise OutOfResources("out of resource: shared memory, Required: 327680, Hardware limit: 232448")

        entry = tad_dotcheck.dot_product(stub, jvp, bound_args(torch.float32), ["x", "w"], 3, 1e-4)
        self.assertEqual(entry, {"skipped": "forward mode needs more shared memory than the GPU has: "
                                            "out of resource: shared memory, Required: 327680, "
                                            "Hardware limit: 232448"})

        def registers(x, w, scale=2.0, *, tangents):
            raise OutOfResources("out of resource: registers")

        with self.assertRaises(OutOfResources):  # any other failure stays the case's error
            tad_dotcheck.dot_product(stub, registers, bound_args(torch.float32), ["x", "w"], 3, 1e-4)

    def test_arguments_are_left_alone(self):
        bound = bound_args(torch.float32)
        x = bound.arguments["x"]
        tad_dotcheck.dot_product(stub, make_jvp(), bound, ["x", "w"], 3, 1e-4)
        self.assertIs(bound.arguments["x"], x)
        self.assertFalse(x.requires_grad)

    def test_stub_updating_its_input_in_place(self):
        # x <- x + tanh(w), returned: each call gets its own copy of x, and the caller's x is kept.
        def inplace(x, w):
            return x.add_(torch.tanh(w))

        def jvp(x, w, *, tangents):
            t = torch.tanh(w)
            return inplace(x, w), tangents["x"] + (1 - t * t) * tangents["w"]

        bound = inspect.signature(inplace).bind(*bound_args(torch.float64).args[:2])
        x0 = bound.arguments["x"].clone()
        entry = tad_dotcheck.dot_product(inplace, jvp, bound, ["x", "w"], 3, 1e-12, dirty=("x",))
        self.assertTrue(entry["ok"], entry)
        self.assertTrue(torch.equal(bound.arguments["x"], x0))
        with self.assertRaisesRegex(RuntimeError, "leaf Variable that requires grad"):
            tad_dotcheck.dot_product(inplace, jvp, bound, ["x", "w"], 3, 1e-12)

    def test_tangent_of_the_wrong_shape_is_an_error(self):
        def jvp(x, w, scale=2.0, *, tangents):
            return stub(x, w, scale), (torch.zeros(3), None)
        with self.assertRaisesRegex(ValueError, r"tangent of shape \[3\] for output 0 of shape \[8, 32\]"):
            tad_dotcheck.dot_product(stub, jvp, bound_args(torch.float32), ["x", "w"], 3, 1e-4)


FORWARD = """
import torch

def stub(x, w, scale=2.0):
    return torch.tanh(x) * w * scale, (x * x).sum()

def make_args(dims):
    dtype = getattr(torch, dims["dtype"])
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=dims["device"])
    w = torch.randn(dims["N"], dtype=dtype, device=dims["device"])
    return (x, w), {}

def reference(x, w, scale=2.0):
    return stub(x, w, scale)
"""


def module_from(source, **names):
    module = types.ModuleType("m")
    module.__file__ = "<m>"
    module.__dict__.update(names)
    exec(source, module.__dict__)
    return module


class VerifyEntries(unittest.TestCase):
    """tad_verify.verify puts the check in every case as "dot_product"."""

    def run_verify(self, generated):
        module = module_from(FORWARD)
        report = tad_verify.verify(module, module.stub, generated, [{"M": 4, "N": 16}],
                                   ["float32", "float64"], 3, ["x", "w"], "cpu", lambda m, f: None)
        return report["results"]

    def test_module_with_jvp_passes_with_the_numbers(self):
        generated = types.SimpleNamespace(forward=stub, jvp=make_jvp(), GRAD_INPUTS=("x", "w"))
        for entry in self.run_verify(generated):
            self.assertEqual(entry["status"], "pass", entry)
            dot = entry["dot_product"]
            self.assertTrue(dot["ok"])
            self.assertEqual(dot["rtol"], tad_dotcheck.RTOL[entry["dtype"]])
            self.assertLess(abs(dot["jvp"] - dot["vjp"]), dot["rtol"] * abs(dot["vjp"]) + 1e-9)

    def test_tf32_kernels_get_the_float16_tolerance_in_float32(self):
        generated = types.SimpleNamespace(forward=stub, jvp=make_jvp(), GRAD_INPUTS=("x", "w"),
                                          TF32=True)
        rtol = {e["dtype"]: e["dot_product"]["rtol"] for e in self.run_verify(generated)}
        self.assertEqual(rtol, {"float32": tad_dotcheck.RTOL["float16"],
                                "float64": tad_dotcheck.RTOL["float64"]})

    def test_wrong_jvp_fails_the_case_whose_gradients_pass(self):
        generated = types.SimpleNamespace(forward=stub, jvp=make_jvp(1.5), GRAD_INPUTS=("x", "w"))
        for entry in self.run_verify(generated):
            self.assertTrue(all(g["ok"] for g in entry["grads"]))
            self.assertEqual(entry["status"], "fail")
            self.assertFalse(entry["dot_product"]["ok"])
            self.assertTrue(entry["message"].startswith("dot-product test fails: <J v, u> = "), entry)

    def test_module_without_jvp_says_why(self):
        generated = types.SimpleNamespace(forward=stub, GRAD_INPUTS=("x", "w"),
                                          JVP_UNSUPPORTED="f.py:3:5: unsupported construct 'for_begin'")
        for entry in self.run_verify(generated):
            self.assertEqual(entry["status"], "pass")
            self.assertEqual(entry["dot_product"], {"skipped": generated.JVP_UNSUPPORTED})
        bare = types.SimpleNamespace(forward=stub, GRAD_INPUTS=("x", "w"))
        self.assertEqual(self.run_verify(bare)[0]["dot_product"],
                         {"skipped": "the generated module has no jvp"})


if __name__ == "__main__":
    unittest.main()

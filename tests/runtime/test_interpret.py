"""tad_interpret: the stand-in triton's launches run on tad's interpreter (libtad's tad_interpret).
Needs TAD_LIBRARY, the path of libtad (worker_test.cpp sets it when it runs these tests)."""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(HERE, "..", "..", "src", "runtime", "python")
sys.path[:0] = [os.path.join(PYDIR, "standin"), PYDIR]

import torch  # noqa: E402
import triton  # noqa: E402

import tad_interpret  # noqa: E402
import tad_userfile  # noqa: E402
from tad_trace import TadError  # noqa: E402

SOURCE = '''
import torch
import triton
import triton.language as tl


@triton.jit
def gather_scale(X, IDX, Y, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    src = tl.load(IDX + offs, mask=mask, other=0)
    tl.store(Y + offs, alpha * tl.load(X + src, mask=mask), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def double(X, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(X + offs, 2.0 * tl.load(X + offs, mask=mask), mask=mask)


def reversed_half(x):
    """A view into the middle of x's storage, an int32 table, an output asked for in float32."""
    tail = x[2:]
    n = tail.numel()
    idx = torch.arange(n - 1, -1, -1, dtype=torch.int32)
    y = torch.empty(n, dtype=torch.float32)
    gather_scale[(triton.cdiv(n, 4),)](tail, idx, y, n, 0.5, BLOCK=4)
    return y


def out_of_bounds(x):
    y = torch.empty_like(x)
    gather_scale[(1,)](x, torch.full((4,), 99, dtype=torch.int32), y, 4, 1.0, BLOCK=4)
    return y


def doubled_in_place(x):
    double[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, x.numel())
    return x
'''


@unittest.skipUnless(os.environ.get("TAD_LIBRARY"), "needs TAD_LIBRARY (the path of libtad)")
class Interpreter(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        path = os.path.join(cls.dir.name, "kernels.py")
        with open(path, "w") as f:
            f.write(SOURCE)
        cls.module = tad_userfile.load_module(path)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def run_stub(self, name, *args):
        with tad_interpret.executing(os.environ["TAD_LIBRARY"]):
            return getattr(self.module, name)(*args)

    def test_views_and_integer_tables(self):
        x = torch.arange(10, dtype=torch.float64)
        y = self.run_stub("reversed_half", x)
        self.assertEqual(y.tolist(), [0.5 * v for v in range(9, 1, -1)])

    def test_narrow_floats_are_float64_as_in_the_interpreter(self):
        x = torch.full((10,), 1 / 3, dtype=torch.float64)
        self.assertEqual(self.run_stub("reversed_half", x).dtype, torch.float64)  # asked for float32
        with tad_interpret.executing(os.environ["TAD_LIBRARY"]):
            self.assertEqual(x.to(torch.float16).dtype, torch.float64)
            self.assertEqual(x.float().dtype, torch.float32)  # tad_verify's precision probe
            self.assertEqual(torch.zeros(2, dtype=torch.bfloat16).dtype, torch.float64)
            self.assertEqual(torch.zeros(2, dtype=torch.int32).dtype, torch.int32)
        self.assertEqual(x.float().dtype, torch.float32)

    def test_autotuned_kernels_take_the_chosen_config(self):
        x = torch.arange(100, dtype=torch.float64)
        self.assertIs(self.run_stub("doubled_in_place", x), x)
        self.assertEqual(x.tolist(), [2.0 * v for v in range(100)])

    def test_a_fault_names_the_kernel_and_the_interpreter(self):
        with self.assertRaises(TadError) as caught:
            self.run_stub("out_of_bounds", torch.zeros(4, dtype=torch.float64))
        self.assertEqual(caught.exception.kind, "launch")
        path = os.path.join(self.dir.name, "kernels.py")
        self.assertEqual(caught.exception.message,
                         f"kernel 'gather_scale' on tad's interpreter: {path}:12:32: out-of-bounds "
                         "load of 'buffer 0' at element 99 (size 4) in program (0, 0, 0)")

    def test_the_executor_is_removed_afterwards(self):
        self.run_stub("doubled_in_place", torch.ones(4, dtype=torch.float64))
        self.assertIsNone(triton.TAD_EXECUTOR)
        with self.assertRaisesRegex(RuntimeError, "with no executor"):
            self.module.doubled_in_place(torch.ones(4, dtype=torch.float64))

    def test_a_missing_library_is_a_bad_request(self):
        with self.assertRaises(TadError) as caught:
            with tad_interpret.executing("/nonexistent/libtad.so"):
                pass
        self.assertEqual(caught.exception.message, "no libtad at /nonexistent/libtad.so")


if __name__ == "__main__":
    unittest.main()

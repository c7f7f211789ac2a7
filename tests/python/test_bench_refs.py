"""bench/refs: the hand-written backward references give eager autograd's gradients of their kernel
file's reference(), run on CPU torch through tests/python/fake_triton.py (no GPU, no Triton here).

Sizes are small but not block multiples, and the persistent kernels get a few programs so that
each loops over several rows. Needs CPU torch (skips without it); bench/suite.py repeats the check
on the GPU before it times anything.
"""
import importlib.util
import inspect
import os
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
BENCH = os.path.join(ROOT, "bench")

try:
    import torch
except ImportError:
    torch = None

refs = None


def install():
    """Imports bench/refs over the stand-in triton; returns what to put back afterwards (the
    stand-in must not leak into other tests of the same process)."""
    global refs
    import fake_triton

    saved = {name: sys.modules.get(name) for name in ("triton", "triton.language", "tad")}
    fake_triton.install()
    if saved["tad"] is None:
        sys.modules["tad"] = types.SimpleNamespace(
            autodiff=lambda fn=None, **_: (lambda f: f) if fn is None else fn)
    sys.path.insert(0, BENCH)
    import refs as imported
    import refs._common  # noqa: F401

    refs = imported
    return saved


def uninstall(saved):
    sys.path.remove(BENCH)
    for name in [n for n in sys.modules if n == "refs" or n.startswith("refs.")]:
        del sys.modules[name]
    for name, module in saved.items():
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module


def load(relative):
    path = os.path.join(ROOT, relative)
    spec = importlib.util.spec_from_file_location("forward_" + os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@unittest.skipIf(torch is None, "[SKIP] no torch")
class References(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.saved = install()

    @classmethod
    def tearDownClass(cls):
        uninstall(cls.saved)

    def setUp(self):
        self._sm_count = refs._common.sm_count
        refs._common.sm_count = lambda device: 2

    def tearDown(self):
        refs._common.sm_count = self._sm_count

    def check(self, relative, dims, dtype="float32", tol=1e-4):
        file = load(relative)
        ref = refs.for_file(os.path.basename(relative)[:-3])
        torch.manual_seed(0)
        args, kwargs = file.make_args({**dims, "device": "cpu", "dtype": dtype})
        bound = inspect.signature(file.reference).bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        truth = {k: (v.detach().to(torch.float64, copy=True)
                     if torch.is_tensor(v) and v.is_floating_point() else v)
                 for k, v in arguments.items()}
        leaves = [truth[n].requires_grad_(True) for n in ref.GRAD_INPUTS]
        out = file.reference(**truth)
        dy = torch.randn(out.shape, dtype=torch.float64)
        want = torch.autograd.grad(out, leaves, dy)
        got = ref.backward(**arguments, grad_out=dy.to(getattr(torch, dtype)))
        self.assertEqual(len(got), len(want))
        for name, g, w in zip(ref.GRAD_INPUTS, got, want):
            self.assertEqual(g.shape, w.shape, name)
            self.assertEqual(g.dtype, arguments[name].dtype, name)
            err = (g.double() - w).abs().max().item() / w.abs().max().item()
            self.assertLess(err, tol, f"{relative} {dims} {dtype}: d{name}")
        return ref

    def test_layernorm(self):
        self.check("examples/layernorm.py", {"M": 37, "N": 100})

    def test_rmsnorm(self):
        self.check("dataset/rmsnorm.py", {"M": 37, "N": 100})

    def test_softmax(self):
        self.check("examples/softmax.py", {"M": 5, "N": 100})

    def test_cross_entropy_blocks_and_ignored_rows(self):
        # V over one 4096 block; make_args marks every fourth row ignored.
        self.check("dataset/cross_entropy.py", {"N": 6, "V": 5000})

    def test_matmul(self):
        self.check("dataset/matmul.py", {"M": 37, "N": 29, "K": 50})

    def test_flash_attention(self):
        for causal in (False, True):
            # float32 tiles are 32/64 wide: 80 rows span several partial blocks.
            self.check("dataset/flash_attention.py",
                       {"B": 1, "H": 2, "N": 80, "D": 16, "causal": causal})

    def test_flash_attention_half_tiles(self):
        # float16 picks the 64/128-wide tiles the suite times; 300 rows span three partial ones.
        for causal in (False, True):
            self.check("dataset/flash_attention.py",
                       {"B": 1, "H": 1, "N": 300, "D": 16, "causal": causal}, "float16", 2e-2)

    def test_group_norm(self):
        self.check("dataset/group_norm.py", {"N": 2, "C": 8, "HW": 50, "G": 4})
        # HW over one 4096 block (two iterations of the sums' loop, five dx programs per channel).
        self.check("dataset/group_norm.py", {"N": 2, "C": 4, "HW": 5000, "G": 2})
        self.check("dataset/group_norm.py", {"N": 2, "C": 8, "HW": 50, "G": 4}, "float16", 2e-2)

    def test_norms_half(self):
        self.check("examples/layernorm.py", {"M": 37, "N": 100}, "float16", 2e-2)
        self.check("dataset/rmsnorm.py", {"M": 37, "N": 100}, "float16", 2e-2)

    def test_flash_attention_forward_saves_lse(self):
        fa = refs.for_file("flash_attention")
        torch.manual_seed(0)
        q, k, v = (torch.randn(1, 2, 50, 16) for _ in range(3))
        for causal in (False, True):
            o, lse = fa.forward(q, k, v, 0.25, causal)
            s = (q @ k.transpose(-1, -2)) * 0.25
            if causal:
                s = s.masked_fill(torch.ones(50, 50, dtype=torch.bool).triu(1), float("-inf"))
            self.assertLess((lse - torch.logsumexp(s, -1)).abs().max().item(), 1e-4)
            self.assertLess((o - torch.softmax(s, -1) @ v).abs().max().item(), 1e-4)

    def test_persistent_programs_loop_over_rows(self):
        ref = self.check("examples/layernorm.py", {"M": 37, "N": 100})
        (grid, meta), = ref._layernorm_bwd.launches[-1:]
        # 2 "SMs" x 4 programs per SM at a 128 block: 8 programs, each over several rows.
        self.assertEqual(grid, (8,))
        self.assertEqual(meta["BLOCK_N"], 128)


if __name__ == "__main__":
    unittest.main()

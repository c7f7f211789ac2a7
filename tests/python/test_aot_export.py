"""The Python side of exported backwards (docs/aot.md) on CPU torch, without a GPU or Triton:
- tad's support kernels (src/runtime/python/tad_aot_support.py) run through tests/python/
  fake_triton.py compute what the generated launcher computes with torch: partial rows summed in
  row order (bench/aot_proof.py's in-order reference, to the bit), added as torch's add_, and
  casts as torch's .to;
- tad_export.py's model of Triton's specializations and its reading of a PTX entry.
Skips without torch.
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")

try:
    import torch
except ImportError:
    torch = None

support = export = proof = None
_saved = {}


def setUpModule():
    global support, export, proof
    if torch is None:
        raise unittest.SkipTest("[SKIP] no torch (apt-get install python3-torch)")
    import fake_triton

    _saved.update({k: v for k, v in sys.modules.items() if k == "triton" or k.startswith("triton.")})
    triton = fake_triton.install()
    triton.language.float64 = torch.float64
    sys.path[:0] = [os.path.join(ROOT, "src", "runtime", "python"), os.path.join(ROOT, "bench")]
    import aot_proof
    import tad_aot_support
    import tad_export

    support, export, proof = tad_aot_support, tad_export, aot_proof


def tearDownModule():
    for name in [k for k in sys.modules if k == "triton" or k.startswith("triton.")]:
        del sys.modules[name]
    sys.modules.update(_saved)
    for name in ("tad_aot_support", "tad_export", "aot_proof"):
        sys.modules.pop(name, None)


def row_sum(partial, out, add):
    rows, n = partial.shape
    grid = (-(-n // support.BLOCK),)
    support.tad_row_sum[grid](partial, out, rows, n, ADD=add, BLOCK=support.BLOCK)
    return out


class SupportKernels(unittest.TestCase):
    def partial(self, dtype, rows=5, n=1500):
        g = torch.Generator().manual_seed(7)
        return (torch.randn(rows, n, generator=g, dtype=torch.float64) * 1e3).to(dtype)

    def test_row_sums_are_the_in_order_sums_to_the_bit(self):
        for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
            p = self.partial(dtype)
            got = row_sum(p, torch.full((p.shape[1],), float("nan"), dtype=dtype), add=False)
            (want,) = proof.in_order_row_sums(p)
            self.assertTrue(torch.equal(got, want), dtype)

    def test_a_float32_sum_into_a_16_bit_output_rounds_once(self):
        p = self.partial(torch.float32)
        got = row_sum(p, torch.zeros(p.shape[1], dtype=torch.float16), add=False)
        (want,) = proof.in_order_row_sums(p)
        self.assertTrue(torch.equal(got, want.to(torch.float16)))

    def test_adding_the_sum_is_torchs_add(self):
        for dtype in (torch.float32, torch.float16):
            p = self.partial(dtype)
            out = self.partial(dtype, rows=1)[0] * 0.5
            want = out.clone()
            want.add_(proof.in_order_row_sums(p)[0])
            self.assertTrue(torch.equal(row_sum(p, out, add=True), want), dtype)

    def test_casts_round_as_torch(self):
        x = self.partial(torch.float32, rows=1)[0] / 3
        for dtype in (torch.float16, torch.bfloat16):
            y = torch.empty(x.shape, dtype=dtype)
            support.tad_cast[(-(-x.numel() // support.BLOCK),)](x, y, x.numel(), BLOCK=support.BLOCK)
            self.assertTrue(torch.equal(y, x.to(dtype)), dtype)

    def test_variants_cover_each_dtype_and_its_wide_one(self):
        names = [(k.fn.__name__, tuple(str(d) for d in dts), tuple(c.items()))
                 for k, dts, c in support.variants([torch.float32, torch.float16])]
        self.assertEqual(len(names), 2 + 8 + 1)  # float32: ADD or not; float16: 2 x 2 dtypes x ADD; a cast
        self.assertIn(("tad_cast", ("torch.float32", "torch.float16"), ()), names)
        self.assertIn(("tad_row_sum", ("torch.float16", "torch.float32"), (("ADD", True),)), names)


PTX = """
.visible .entry _layernorm_fwd_bwd(
	.param .u64 .ptr .global .align 1 _layernorm_fwd_bwd_param_0,
	.param .u32 _layernorm_fwd_bwd_param_1,
	.param .f32 _layernorm_fwd_bwd_param_2,
	.param .u8 _layernorm_fwd_bwd_param_3,
	.param .u64 _layernorm_fwd_bwd_param_4,
	.param .align 8 .b8 _layernorm_fwd_bwd_param_5[16],
	.param .u64 .ptr .global .align 1 _layernorm_fwd_bwd_param_6,
	.param .u64 .ptr .global .align 1 _layernorm_fwd_bwd_param_7
)
.maxntid 128, 1, 1
{
"""


class Export(unittest.TestCase):
    def test_entry_widths_come_from_the_ptx(self):
        self.assertEqual(export.entry_widths(PTX, "_layernorm_fwd_bwd"), [8, 4, 4, 1, 8, 16, 8, 8])
        with self.assertRaisesRegex(export.ExportError, "the PTX of other has no .entry other"):
            export.entry_widths(PTX, "other")

    def test_the_model_of_tritons_specialization(self):
        x = torch.empty(64)
        self.assertEqual(export.expected(x, False), ("*fp32", x.data_ptr() % 16 == 0, None))
        self.assertEqual(export.expected(x[1:], False)[1], False)
        self.assertEqual(export.expected(x, False, align=False), ("*fp32", False, None))
        self.assertEqual(export.expected(1, False), ("constexpr", False, "1"))
        self.assertEqual(export.expected(1, False, specialize=False), ("i32", False, None))
        self.assertEqual(export.expected(48, False), ("i32", True, None))
        self.assertEqual(export.expected(2 ** 31, False), ("i64", True, None))
        self.assertEqual(export.expected(0.5, False), ("fp32", False, None))
        self.assertEqual(export.expected(True, False), ("u1", False, None))
        self.assertEqual(export.expected(1024, True), ("constexpr", False, "1024"))
        self.assertEqual(export.expected(True, True), ("constexpr", False, "True"))


if __name__ == "__main__":
    unittest.main()

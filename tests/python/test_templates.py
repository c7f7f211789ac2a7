"""The Python that tad copies into every generated module, tested where it lives: the template files
of src/emit/templates, imported directly (each imports what it needs above its `# ---- tad:embed ----`
line). Fake kernels stand in for triton's: no triton, no GPU, CPU torch only.

The last class checks that a generated module carries each template's embedded part verbatim."""

import contextlib
import inspect
import math
import os
import shutil
import sys
import tempfile
import types
import unittest
from unittest import mock

import _support
import torch

TEMPLATES = os.path.join(_support.REPO, "src", "emit", "templates")
MARKER = "# ---- tad:embed ----"

rt = _support.import_file(os.path.join(TEMPLATES, "module_runtime.py"))
jvp = _support.import_file(os.path.join(TEMPLATES, "jvp_helpers.py"))


def embedded_part(name):
    """What the library embeds of a template: the text after its marker line."""
    with open(os.path.join(TEMPLATES, name), encoding="utf-8", newline="") as f:
        text = f.read()
    head, sep, tail = text.partition("\n" + MARKER)
    assert sep, f"{name} has no marker line"
    return tail.split("\n", 1)[1]


def garbage_memory():
    """Makes torch.empty_strided and torch.empty return NaN-filled memory, so that a buffer that must
    read as zero is only zero when the helper zeroes it."""
    stack = contextlib.ExitStack()
    for name in ("empty_strided", "empty"):
        real = getattr(torch, name)

        def garbage(*args, _real=real, **kwargs):
            t = _real(*args, **kwargs)
            return t.fill_(math.nan) if t.is_floating_point() else t.fill_(7)

        stack.enter_context(mock.patch.object(torch, name, garbage))
    return stack


def transposed(rows, cols, dtype=torch.float32):
    """A [rows, cols] tensor with column-major strides (1, rows), holding distinct values."""
    return torch.arange(rows * cols, dtype=dtype).reshape(cols, rows).t()


def layout(t):
    return (t.shape, tuple(t.stride()), t.dtype, t.device)


def is_zero(t):
    return bool((t == 0).all())


class Buffers(unittest.TestCase):
    """The gradient buffers the backward launcher allocates."""

    def test_as_layout_returns_a_gradient_that_has_the_layout_as_is(self):
        g = torch.randn(3, 4)
        self.assertIs(rt._as_layout(g, layout(g)), g)

    def test_as_layout_copies_a_gradient_into_the_outputs_strides_and_dtype(self):
        out = transposed(3, 4, torch.float16)
        g = torch.randn(3, 4, dtype=torch.float32)
        with garbage_memory():
            got = rt._as_layout(g, layout(out))
        self.assertEqual(tuple(got.stride()), (1, 3))
        self.assertEqual(got.dtype, torch.float16)
        self.assertTrue(torch.equal(got, g.to(torch.float16)))

    def test_as_layout_of_no_gradient_is_zero(self):
        with garbage_memory():
            got = rt._as_layout(None, (torch.Size([2, 5]), (5, 1), torch.float64, torch.device("cpu")))
        self.assertEqual((tuple(got.shape), got.dtype), ((2, 5), torch.float64))
        self.assertTrue(is_zero(got))

    def test_atomic_buffer_is_zeroed_float32_with_the_inputs_strides(self):
        t = transposed(3, 4, torch.float16)
        with garbage_memory():
            got = rt._atomic_buffer(t)
        self.assertEqual((tuple(got.shape), tuple(got.stride()), got.dtype), ((3, 4), (1, 3), torch.float32))
        self.assertTrue(is_zero(got))

    def test_atomic_buffer_of_a_float64_input_is_float64(self):
        self.assertEqual(rt._atomic_buffer(torch.ones(5, dtype=torch.float64)).dtype, torch.float64)
        self.assertEqual(rt._atomic_buffer(torch.ones(5, dtype=torch.bfloat16)).dtype, torch.float32)

    def test_cotangent_buffer_copies_the_gradient_into_float32_with_the_outputs_strides(self):
        out = transposed(3, 4, torch.float16)
        g = torch.randn(3, 4).to(torch.float16)
        with garbage_memory():
            got = rt._cotangent_buffer(g, layout(out))
        self.assertEqual((tuple(got.stride()), got.dtype), ((1, 3), torch.float32))
        self.assertTrue(torch.equal(got, g.to(torch.float32)))
        self.assertIsNot(got, g)

    def test_cotangent_buffer_of_no_gradient_is_zero_and_float64_stays_float64(self):
        out = torch.ones(2, 3, dtype=torch.float64)
        with garbage_memory():
            got = rt._cotangent_buffer(None, layout(out))
        self.assertEqual(got.dtype, torch.float64)
        self.assertTrue(is_zero(got))

    def test_zero_buffer_is_zeroed_with_the_inputs_layout(self):
        t = transposed(2, 3, torch.float16)
        with garbage_memory():
            got = rt._zero_buffer(t)
        self.assertEqual((tuple(got.shape), tuple(got.stride()), got.dtype), ((2, 3), (1, 2), torch.float16))
        self.assertTrue(is_zero(got))

    def test_as_dtype_casts_to_the_inputs_dtype_and_passes_none(self):
        self.assertIsNone(rt._as_dtype(None, torch.ones(2)))
        got = rt._as_dtype(torch.tensor([1.5, -2.25], dtype=torch.float32), torch.ones(2, dtype=torch.float16))
        self.assertEqual(got.dtype, torch.float16)
        self.assertEqual(got.tolist(), [1.5, -2.25])

    def test_as_dtype_casts_a_block_of_sums_once_for_its_views(self):
        partials = torch.tensor([[[1.0, -2.0, 3.0], [0.5, -0.25, 0.0]], [[0.5, 4.0, -1.0], [0.0, 0.0, 0.0]]])
        rows = rt._row_sums(partials[0], partials[1])
        like = torch.ones(3, dtype=torch.float16)
        first, second = rt._as_dtype(rows[1], like), rt._as_dtype(rows[0], like)
        self.assertEqual((first.dtype, first.tolist()), (torch.float16, [0.5, 4.0, -1.0]))
        self.assertEqual((second.dtype, second.tolist()), (torch.float16, [1.5, -2.25, 3.0]))
        self.assertIsNotNone(first._base)
        self.assertIs(first._base, second._base)
        # a block summed as a view of another tensor (the GPU's product with a row of ones, squeezed)
        squeezed = torch.tensor([[[1.0, 2.0]], [[3.0, 4.0]]]).squeeze(1)
        real_sum_rows = rt._sum_rows
        rt._sum_rows = lambda block: squeezed
        try:
            partials = torch.zeros(2, 1, 2)
            views = rt._row_sums(partials[0], partials[1])
        finally:
            rt._sum_rows = real_sum_rows
        cast = [rt._as_dtype(v, torch.ones(2, dtype=torch.float16)) for v in views]
        self.assertIs(cast[0]._base, cast[1]._base)
        self.assertEqual([c.tolist() for c in cast], [[1.0, 2.0], [3.0, 4.0]])
        # a view of any other tensor (a user's gradient) is cast on its own, and nothing is kept on it
        users = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        alone = rt._as_dtype(users[1], like)
        self.assertEqual((alone._base, alone.tolist()), (None, [4.0, 5.0, 6.0]))
        self.assertFalse(hasattr(users, "_tad_cast"))

    def test_partial_buffers_of_one_row_length_and_dtype_share_one_zeroed_allocation(self):
        w, b, other = torch.ones(4, dtype=torch.float16), torch.ones(4), torch.ones(6)
        with garbage_memory():
            pw, pb, po = rt._partial_buffers(3, (w, True), (b, False), (other, False))
        self.assertEqual([tuple(p.shape) for p in (pw, pb, po)], [(3, 4), (3, 4), (3, 6)])
        self.assertEqual({p.dtype for p in (pw, pb, po)}, {torch.float32})
        self.assertIs(pw._base, pb._base)
        self.assertIsNot(po._base, pw._base)
        self.assertTrue(all(is_zero(p) for p in (pw, pb, po)))

    def test_partial_buffers_whose_rows_every_flush_covers_are_not_filled(self):
        w, b = torch.ones(4), torch.ones(4)
        row = ((1, 4),)  # the flush writes w's 4 elements, stride 1
        with garbage_memory():
            pw, pb = rt._partial_buffers(3, (w, True, row, True), (b, True, row, True))
            guard_fails = rt._partial_buffers(3, (w, True, row, False))[0]
            other_layout = rt._partial_buffers(3, (torch.ones(8)[::2], True, row, True))[0]
            one_uncovered = rt._partial_buffers(3, (w, True, row, True), (b, True))
        self.assertIs(pw._base, pb._base)
        self.assertTrue(torch.isnan(pw).all() and torch.isnan(pb).all())
        self.assertTrue(is_zero(guard_fails))
        self.assertTrue(is_zero(other_layout))
        self.assertTrue(all(is_zero(p) for p in one_uncovered))

    def test_row_sums_sum_each_partial_as_summed_alone(self):
        pw, pb, po = rt._partial_buffers(3, (torch.ones(4), True), (torch.ones(4), True), (torch.ones(2, 3), True))
        for p in (pw, pb, po):
            p.copy_(torch.randn(p.shape))
        got = rt._row_sums(pw, pb, po, torch.arange(6.0).reshape(2, 3))
        for s, p in zip(got, (pw, pb, po, torch.arange(6.0).reshape(2, 3))):
            self.assertTrue(torch.equal(s, p.sum(0)))
        t = transposed(2, 3)
        self.assertTrue(torch.equal(rt._partial_sum(t, got[2]), torch.as_strided(po.sum(0), (2, 3), (1, 2))))
        shadow = torch.ones(4)
        rt._sum_partial(shadow, got[0])
        self.assertTrue(torch.equal(shadow, 1 + pw.sum(0)))

    def test_snapshot_is_a_copy_with_the_same_layout(self):
        t = transposed(3, 4)
        copy = rt._snapshot(t)
        self.assertEqual(tuple(copy.stride()), (1, 3))
        self.assertTrue(torch.equal(copy, t))
        t.add_(1)
        self.assertEqual(copy[2, 3].item(), 11.0)  # the contents from before t changed

    def test_check_launches_names_both_sequences(self):
        launches = [types.SimpleNamespace(kernel="a"), types.SimpleNamespace(kernel="b")]
        rt._check_launches(launches, ("a", "b"))
        with self.assertRaises(RuntimeError) as e:
            rt._check_launches(launches[:1], ("a", "b"))
        self.assertEqual(str(e.exception), "the stub launched ('a',); the backward was generated for ('a', 'b')")


class SumRows(unittest.TestCase):
    """_sum_rows: on the GPU, where float32 products are exact, a product with a row of ones; else
    torch's sum over the rows."""

    def block(self, device, dtype=torch.float32):
        g = torch.Generator().manual_seed(3)
        return (torch.randn(2, 132, 1000, generator=g, dtype=torch.float64) * 100).to(dtype).to(device)

    def test_off_the_gpu_it_is_torchs_sum(self):
        b = self.block("cpu")
        self.assertTrue(torch.equal(rt._sum_rows(b), b.sum(1)))

    def test_on_the_gpu_it_is_the_sum_and_the_same_every_run(self):
        if not torch.cuda.is_available():
            _support.skip(self, "no GPU")
        for dtype in (torch.float32, torch.float64):
            b = self.block("cuda", dtype)
            got = rt._sum_rows(b)
            self.assertEqual(tuple(got.shape), (2, 1000))
            self.assertTrue(torch.equal(got, rt._sum_rows(b)), dtype)
            want = b.double().sum(1)
            self.assertLess(((got.double() - want).abs().max() / want.abs().max()).item(), 1e-6, dtype)

    def test_with_tf32_products_it_sums_as_torch(self):
        if not torch.cuda.is_available():
            _support.skip(self, "no GPU")
        b = self.block("cuda")
        before = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("high")
        try:
            self.assertTrue(torch.equal(rt._sum_rows(b), b.sum(1)))
        finally:
            torch.set_float32_matmul_precision(before)

    def test_a_capture_before_any_call_sums_with_torch(self):
        if not torch.cuda.is_available():
            _support.skip(self, "no GPU")
        rt._ONES.clear()
        b = self.block("cuda")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.stream(side), torch.cuda.graph(graph):
            got = rt._sum_rows(b)
        graph.replay()
        torch.cuda.synchronize()
        self.assertEqual(rt._ONES, {})
        self.assertTrue(torch.equal(got, b.sum(1)))
        rt._sum_rows(b)
        self.assertEqual(list(rt._ONES), [(132, torch.float32, b.device)])


class Regrid(unittest.TestCase):
    """The grid and program count of a re-gridded backward (passes/regrid.h)."""

    def test_one_axis_or_several(self):
        self.assertEqual(rt._grid_size((5, 2), 1), 2)
        self.assertEqual(rt._grid_size((5, 2), 2), 1)  # an axis the grid does not name
        self.assertEqual(rt._grid_size((5, 2, 3), (0, 2)), 15)
        self.assertEqual(rt._regrid((5, 2, 3), 0, 4), (4, 2, 3))
        self.assertEqual(rt._regrid((5, 2, 3), (0, 2), 4), (4, 2, 1))
        self.assertEqual(rt._regrid((5,), (0, 1), 4), (4, 1))

    def test_programs_leave_room_for_the_kept_axes(self):
        with mock.patch.dict(rt._SM_COUNTS, {0: 10}), \
                mock.patch.object(torch.cuda, "current_device", return_value=0):
            # 4 per SM for a 16-element tile: 40 programs, shared with 8 along the kept axis 1
            self.assertEqual(rt._regrid_programs((100, 8), 0, "cuda", 16), 5)
            self.assertEqual(rt._regrid_programs((100, 8), (0, 1), "cuda", 16), 40)
            self.assertEqual(rt._regrid_programs((3, 8), (0, 1), "cuda", 16), 24)  # at most G
            self.assertEqual(rt._regrid_programs((100, 80), 0, "cuda", 16), 1)

    def test_a_product_past_int32_is_refused(self):
        with self.assertRaisesRegex(RuntimeError, "loops over 2147483648 programs by 3: past int32"):
            rt._regrid_programs((65536, 32768), (0, 1), "cpu")
        with self.assertRaisesRegex(RuntimeError, "loops over 2147483645 programs by 3: past int32"):
            rt._regrid_programs((2**31 - 3,), 0, "cpu")  # r + P passes int32 from the last programs
        self.assertEqual(rt._regrid_programs((7, 2), (0, 1), "cpu"), 3)


class OutOfResources(Exception):
    """Named as triton.runtime.errors.OutOfResources: _fit_shared_memory tells it by name."""


class FakeKernel:
    """A compiled kernel that needs `fits` stages or fewer; records the num_stages of each try."""

    def __init__(self, fits=1, error=None):
        self.fits = fits
        self.error = error
        self.tried = []
        self.fn = "the jit function"

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.tried.append(kwargs.get("num_stages"))
            if self.error:
                raise self.error
            if kwargs.get("num_stages", 3) > self.fits:
                raise OutOfResources("out of resource: shared memory, Required: 262144, Hardware limit: 232448")
            return ("ran", grid, args, kwargs)

        return launch


class PartsKernel:
    """A kernel whose parts (TAD_PART 1, 2, ...) fit in one stage and which, whole, fits in none
    (or in every one: `whole_fits`); records (num_stages, TAD_PART) of each try and the parts run."""

    def __init__(self, whole_fits=False):
        self.whole_fits = whole_fits
        self.tried, self.ran = [], []

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            part = kwargs.get("TAD_PART", 0)
            self.tried.append((kwargs.get("num_stages"), part))
            if (part == 0 and not self.whole_fits) or kwargs.get("num_stages", 3) > 1:
                raise OutOfResources("out of resource: shared memory, Required: 245760, Hardware limit: 232448")
            self.ran.append(part)

        return launch


class FitSharedMemory(unittest.TestCase):
    def test_retries_with_fewer_stages_and_remembers_what_fitted(self):
        kernel = FakeKernel(fits=1)
        fit = rt._fit_shared_memory(kernel)
        x = torch.zeros(4)
        self.assertEqual(fit[(1,)](x, BLOCK=64, num_warps=8), ("ran", (1,), (x,), {"BLOCK": 64, "num_warps": 8,
                                                                                     "num_stages": 1}))
        self.assertEqual(kernel.tried, [None, 2, 1])  # triton's default is 3 stages
        fit[(2,)](x, BLOCK=64, num_warps=8)
        self.assertEqual(kernel.tried, [None, 2, 1, 1])  # remembered for the same options and dtypes
        fit[(2,)](x.double(), BLOCK=64, num_warps=8)
        self.assertEqual(kernel.tried, [None, 2, 1, 1, None, 2, 1])  # other dtypes: tried afresh
        fit[(2,)](x, BLOCK=64, num_warps=8, num_stages=4)
        self.assertEqual(kernel.tried[7:], [4, 3, 2, 1])  # other options: from their own num_stages

    def test_other_errors_propagate_untouched(self):
        registers = OutOfResources("out of resource: registers")
        kernel = FakeKernel(error=registers)
        with self.assertRaises(OutOfResources) as e:
            rt._fit_shared_memory(kernel)[(1,)](torch.zeros(2), BLOCK=64)
        self.assertIs(e.exception, registers)
        self.assertEqual(kernel.tried, [None])
        kernel = FakeKernel(error=MemoryError("shared memory"))
        with self.assertRaises(MemoryError):
            rt._fit_shared_memory(kernel)[(1,)](torch.zeros(2))
        self.assertEqual(kernel.tried, [None])

    def test_a_kernel_that_does_not_fit_in_one_stage_fails(self):
        kernel = FakeKernel(fits=0)
        with self.assertRaisesRegex(OutOfResources, "shared memory"):
            rt._fit_shared_memory(kernel)[(1,)](torch.zeros(2), num_stages=2)
        self.assertEqual(kernel.tried, [2, 1])

    def test_a_kernel_with_parts_that_does_not_fit_in_one_stage_runs_in_parts(self):
        kernel = PartsKernel()
        fit = rt._fit_shared_memory(kernel, parts=3)
        x = torch.zeros(2)
        fit[(1,)](x, num_stages=2)
        self.assertEqual(kernel.tried, [(2, 0), (1, 0), (2, 1), (1, 1), (2, 2), (1, 2), (2, 3), (1, 3)])
        self.assertEqual(kernel.ran, [1, 2, 3])  # each part once, none of them whole
        kernel.tried, kernel.ran = [], []
        fit[(1,)](x, num_stages=2)
        self.assertEqual(kernel.tried, [(1, 1), (1, 2), (1, 3)])  # in parts, at the stages that fitted
        self.assertEqual(kernel.ran, [1, 2, 3])
        with self.assertRaisesRegex(OutOfResources, "shared memory"):  # without parts: the error
            rt._fit_shared_memory(PartsKernel())[(1,)](x, num_stages=1)
        kernel = FakeKernel(fits=1)
        rt._fit_shared_memory(kernel, parts=2)[(1,)](x)  # fits whole: one launch
        self.assertEqual(kernel.tried, [None, 2, 1])

    def test_write_parts_always_runs_every_kernel_with_parts_in_parts(self):
        kernel = PartsKernel(whole_fits=True)
        rt._PARTS_ALWAYS[0] = True
        try:
            rt._fit_shared_memory(kernel, parts=2)[(1,)](torch.zeros(2), num_stages=1)
            rt._fit_shared_memory(FakeKernel(fits=1))[(1,)](torch.zeros(2), num_stages=1)  # no parts: whole
        finally:
            rt._PARTS_ALWAYS[0] = False
        self.assertEqual(kernel.ran, [1, 2])

    def test_pipelined_loops_take_the_launchs_stages_also_when_retried(self):
        kernel = FakeKernel(fits=2)
        kernel.arg_names = ["X", "BLOCK", "TAD_LOOP_STAGES"]
        fit = rt._fit_shared_memory(kernel)
        x = torch.zeros(4)
        self.assertEqual(fit[(1,)](x, BLOCK=64, num_stages=4)[3],
                         {"BLOCK": 64, "num_stages": 2, "TAD_LOOP_STAGES": 2})
        self.assertEqual(kernel.tried, [4, 3, 2])
        self.assertEqual(fit[(1,)](x, BLOCK=64)[3]["TAD_LOOP_STAGES"], 2)  # from triton's default of 3
        kernel.arg_names = ["X", "BLOCK"]  # no pipelined loop: no such argument
        self.assertNotIn("TAD_LOOP_STAGES", fit[(1,)](x, BLOCK=64, num_stages=1)[3])
        kernel.arg_names = ["X", "TAD_LOOP_STAGES"]  # the forward's own constexpr of that name
        self.assertEqual(fit[(1,)](x, TAD_LOOP_STAGES=7, num_stages=1)[3]["TAD_LOOP_STAGES"], 7)

    def test_retile_sets_a_block_size_where_it_divides_the_work_exactly(self):
        kernel = FakeKernel(fits=3)
        kernel.arg_names = ["X", "G", "BLOCK_M", "BLOCK_N"]
        fit = rt._fit_shared_memory(kernel)
        x = torch.zeros(4, dtype=torch.float16)
        tiles = (("BLOCK_M", "G", 64), ("BLOCK_N", 1, 256))
        # 128 * 3 rows over G in 64-row steps: G = 6; 32 * 8 columns in 256-wide tiles: 1 program
        self.assertEqual(fit[(4, 8)](x, 3, BLOCK_M=128, BLOCK_N=32, _tiles=tiles),
                         ("ran", (4, 1), (x, 6), {"BLOCK_M": 64, "BLOCK_N": 256}))
        # 32 * 7 columns are not a multiple of 256; a grid without axis 1 has one program along it
        self.assertEqual(fit[(4, 7)](x, 3, BLOCK_M=128, BLOCK_N=32, _tiles=tiles)[1:3], ((4, 7), (x, 6)))
        self.assertEqual(fit[(4,)](x, 1, BLOCK_M=128, BLOCK_N=256, _tiles=tiles)[1:], ((4, 1), (x, 2),
                                                                                         {"BLOCK_M": 64, "BLOCK_N": 256}))
        # a target of 0 keeps the value; 128 * 3 rows are not a multiple of 256
        self.assertEqual(fit[(4,)](x, 3, BLOCK_M=128, BLOCK_N=32, _tiles=(("BLOCK_M", "G", 256), ("BLOCK_N", 0, 0)))[1:],
                         ((4,), (x, 3), {"BLOCK_M": 128, "BLOCK_N": 32}))
        # the targets are for 16-bit tensors: with a float32 one the sizes stay as recorded
        ran = fit[(4, 8)](x.float(), 3, BLOCK_M=128, BLOCK_N=32, _tiles=tiles)
        self.assertEqual((ran[1], ran[2][1], ran[3]), ((4, 8), 3, {"BLOCK_M": 128, "BLOCK_N": 32}))

    def test_widen_sizes_a_widened_block_from_the_launchs_tiles(self):
        # matmul's dA tile BLOCK_M x BLOCK_K at 64 x 32: x4 (the side stops at 128); at 64 x 64,
        # twice, where a factor fixed at 64 x 32 made a 512-wide tile Triton computed wrong
        self.assertEqual(rt._widen(32, 8, ((64, 32),)), 128)
        self.assertEqual(rt._widen(64, 8, ((64, 64),)), 128)
        self.assertEqual(rt._widen(16, 8, ((16,),)), 128)  # the most copies, 8
        self.assertEqual(rt._widen(8, 2, ((8,),)), 16)
        self.assertEqual(rt._widen(32, 8, ((128, 32), (128, 32))), 64)  # two tiles share 128 x 128
        self.assertEqual(rt._widen(256, 8, ((64, 256),)), 256)  # wider already: as launched

    def test_forwards_the_kernels_attributes_without_recursing(self):
        self.assertEqual(rt._fit_shared_memory(FakeKernel()).fn, "the jit function")
        bare = rt._fit_shared_memory.__new__(rt._fit_shared_memory)  # as copy and pickle make it
        with self.assertRaises(AttributeError):
            bare.fn


class TimedKernel:
    """A compiled kernel with arguments (X, DX, n) whose launch time depends on its options: fastest
    at 8 warps and 2 stages. Logs each launch's tensors and options."""

    arg_names = ["X", "DX", "n"]
    cache_key = "source-hash"

    def __init__(self):
        self.launches = []
        self.fn = types.SimpleNamespace(__name__="_k_bwd")

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.launches.append((args, kwargs))

        return launch

    @staticmethod
    def ms(kwargs):
        return abs(kwargs.get("num_warps", 4) - 8) + abs(kwargs.get("num_stages", 3) - 2) + 1.0


class Tuner(unittest.TestCase):
    def setUp(self):
        self.can_time = rt._Tuner._can_time
        self.cache = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.cache)
        patches = [mock.patch.dict(os.environ, {"TAD_CACHE_DIR": self.cache}),
                   mock.patch.object(rt, "_AUTOTUNE", ["all"]),
                   mock.patch.object(rt._Tuner, "_can_time", staticmethod(lambda args: True))]
        for p in patches:
            p.start()
            self.addCleanup(p.stop)

    def tuned(self, kernel):
        """The kernel wrapped as a generated module wraps it, timed by its own clock."""
        wrapped = rt._tuned("DX")(kernel)
        timed = []

        def timer(run):
            run()
            timed.append(kernel.launches[-1][1])
            return TimedKernel.ms(kernel.launches[-1][1])

        wrapped.tuner.timer = timer
        return wrapped, timed

    def test_chooses_the_fastest_options_on_copies_of_what_the_kernel_writes(self):
        kernel = TimedKernel()
        k, timed = self.tuned(kernel)
        x, dx = torch.ones(4), torch.zeros(4)
        k[(2,)](x, dx, 4, BLOCK=16, num_warps=4)
        self.assertEqual(len(timed), 7)  # as launched, 2/8/16 warps, then 1/3/4 stages at 8 warps
        args, options = kernel.launches[-1]
        self.assertIs(args[0], x)
        self.assertIs(args[1], dx)  # the real launch writes the real buffer
        self.assertEqual(options, {"BLOCK": 16, "num_warps": 8, "num_stages": 2})
        for trial_args, _ in kernel.launches[:-1]:
            self.assertIs(trial_args[0], x)
            self.assertIsNot(trial_args[1], dx)  # trials write a copy
        self.assertEqual(rt.tad_tuned()[-1]["options"], {"num_warps": 8, "num_stages": 2})
        self.assertEqual(rt.tad_tuned()[-1]["launched_ms"], 6.0)
        k[(2,)](x, dx, 4, BLOCK=16, num_warps=4)
        self.assertEqual(len(timed), 7)  # the same key: no second tuning
        k[(2,)](x, dx, 5, BLOCK=16, num_warps=4)
        self.assertEqual(len(timed), 7)  # another scalar (a seed, an offset): not a new key
        k[(2,)](torch.ones(8), torch.zeros(8), 8, BLOCK=16, num_warps=4)
        self.assertEqual(len(timed), 14)  # other shapes: tuned again

    def test_candidates_pipeline_their_loops_at_their_own_stages(self):
        kernel = TimedKernel()
        kernel.arg_names = ["X", "DX", "n", "TAD_LOOP_STAGES"]
        k, timed = self.tuned(kernel)
        k[(2,)](torch.ones(4), torch.zeros(4), 4, BLOCK=16)
        self.assertEqual(len(timed), 7)
        for options in timed + [kernel.launches[-1][1]]:
            self.assertEqual(options["TAD_LOOP_STAGES"], options["num_stages"])
        self.assertEqual(kernel.launches[-1][1]["TAD_LOOP_STAGES"], 2)  # the choice's stages

    def test_chooses_free_block_sizes_first_then_warps_and_stages(self):
        kernel = TimedKernel()
        kernel.arg_names = ["X", "DX", "G"]
        fastest = TimedKernel.ms
        kernel_ms = lambda kw: fastest(kw) + abs(kw.get("BLOCK_M", 128) - 32) / 32  # fastest at 32 rows
        k, timed = self.tuned(kernel)
        k.tuner.timer = lambda run: (run(), kernel_ms(kernel.launches[-1][1]))[1]
        x, dx = torch.ones(4, dtype=torch.float16), torch.zeros(4, dtype=torch.float16)
        k[(2,)](x, dx, 4, BLOCK_M=128, num_warps=4, _tiles=(("BLOCK_M", "G", 64),))
        args, options = kernel.launches[-1]
        self.assertEqual(args[2], 16)  # 128 * 4 rows in 32-row steps
        self.assertEqual(options, {"BLOCK_M": 32, "num_warps": 8, "num_stages": 2})
        self.assertEqual(rt.tad_tuned()[-1]["tiles"], {"BLOCK_M": 32})
        # 6 tile candidates (128 as recorded, 32, 64 at 4 and 8 warps; the target 128 launches as the
        # recorded value does, so it is not timed again), then 2 and 16 warps, then 1, 2 and 4 stages
        self.assertEqual(len({repr(sorted(o.items())) for _, o in kernel.launches[:-1]}), 11)
        self.assertEqual(len(kernel.launches[:-1]), 11)
        second, timed = self.tuned(TimedKernel())
        second.kernel.arg_names = kernel.arg_names
        second[(2,)](x, dx, 4, BLOCK_M=128, num_warps=4, _tiles=(("BLOCK_M", "G", 64),))
        self.assertEqual(timed, [])  # from the file, tiles and all
        self.assertEqual(second.kernel.launches[-1][1]["BLOCK_M"], 32)

    def test_a_choice_on_disk_is_used_without_timing(self):
        x, dx = torch.ones(4), torch.zeros(4)
        first, _ = self.tuned(TimedKernel())
        first[(2,)](x, dx, 4, BLOCK=16)
        kernel = TimedKernel()
        second, timed = self.tuned(kernel)
        second[(2,)](x, dx, 4, BLOCK=16)
        self.assertEqual(timed, [])
        self.assertEqual(kernel.launches[-1][1], {"BLOCK": 16, "num_warps": 8, "num_stages": 2})

    def test_a_failing_candidate_is_never_chosen_and_all_failing_keep_the_options(self):
        x, dx = torch.ones(4), torch.zeros(4)
        kernel = TimedKernel()
        k, _ = self.tuned(kernel)

        def timer(run):
            run()
            if kernel.launches[-1][1].get("num_warps") == 8:
                raise RuntimeError("compilation failed")
            return TimedKernel.ms(kernel.launches[-1][1])

        k.tuner.timer = timer
        k[(2,)](x, dx, 4, BLOCK=16)
        self.assertNotEqual(kernel.launches[-1][1]["num_warps"], 8)
        kernel = TimedKernel()
        k, _ = self.tuned(kernel)
        k.tuner.timer = lambda run: (_ for _ in ()).throw(MemoryError("out of memory"))
        k[(3,)](x, dx, 4, BLOCK=16)
        self.assertEqual(kernel.launches[-1][1], {"BLOCK": 16})

    def test_no_tuning_when_off_or_when_the_launch_cannot_be_timed(self):
        x, dx = torch.ones(4), torch.zeros(4)
        kernel = TimedKernel()
        k, timed = self.tuned(kernel)
        with mock.patch.object(rt, "_AUTOTUNE", ["off"]):
            k[(2,)](x, dx, 4, BLOCK=16)
        with mock.patch.object(rt._Tuner, "_can_time", staticmethod(lambda args: False)):
            k[(2,)](x, dx, 4, BLOCK=16)
        self.assertEqual(timed, [])
        self.assertEqual([o for _, o in kernel.launches], [{"BLOCK": 16}, {"BLOCK": 16}])
        self.assertFalse(self.can_time((x, dx)))  # CPU tensors are not timed

    def test_a_key_whose_trials_all_fail_keeps_its_options_and_is_not_tried_again(self):
        kernel = TimedKernel()
        wrapped = rt._tuned("DX")(kernel)
        tries = []

        def failing(run):
            tries.append(1)
            raise RuntimeError("out of resources")

        wrapped.tuner.timer = failing
        x, dx = torch.ones(4), torch.zeros(4)
        wrapped[(2,)](x, dx, 4, BLOCK=16, num_warps=4)
        n = len(tries)
        self.assertGreater(n, 0)
        wrapped[(2,)](x, dx, 4, BLOCK=16, num_warps=4)
        self.assertEqual(len(tries), n)  # given up on, once
        self.assertEqual([o for _, o in kernel.launches], [{"BLOCK": 16, "num_warps": 4}] * 2)
        self.assertEqual(wrapped.tuner.chosen, {})  # nothing to report, nothing on disk

    def test_auto_tunes_kernels_with_a_dot_or_a_persistent_loop(self):
        self.assertEqual([rt._autotune_mode(v) for v in ("", "0", "off", "OFF", "False", "no", "none", "1", "on",
                                                          "all", "yes", "auto", "Dots")],
                         ["off"] * 7 + ["all"] * 4 + ["auto"] * 2)
        self.assertIn('_AUTOTUNE = [_autotune_mode(os.environ.get("TAD_AUTOTUNE", "all"))]',
                      inspect.getsource(rt))  # unset: every kernel
        x, dx = torch.ones(4), torch.zeros(4)
        for src, args, tuned in (("acc = tl.dot(a, b, acc)", ("X", "DX", "n"), True),
                                 ("y = tl.sum(x, axis=0)", ("X", "DX", "n", "TAD_LOOP_STAGES"), True),
                                 ("y = tl.sum(x, axis=0)", ("X", "DX", "n"), False)):
            kernel = TimedKernel()
            kernel.src = src
            kernel.arg_names = args
            kernel.cache_key = repr((src, args))  # no choice from the disk cache of another case
            k, timed = self.tuned(kernel)
            with mock.patch.object(rt, "_AUTOTUNE", ["auto"]):
                k[(2,)](x, dx, 4, BLOCK=16)
            self.assertEqual(bool(timed), tuned, (src, args))
            self.assertEqual(kernel.launches[-1][1].get("num_warps"), 8 if tuned else None, src)


def kernel_fn(X, Y, n, scale=2.0, BLOCK: "tl.constexpr" = 32, EVEN: "tl.constexpr" = None):
    pass


class FakeJit:
    """A @triton.jit kernel: runs `body` (when given) on its arguments, and logs each launch."""

    def __init__(self, fn=kernel_fn, body=None):
        self.fn = fn
        self.body = body
        self.launched = []

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.launched.append((grid, args, kwargs))
            if self.body:
                self.body(*args, **kwargs)
            return "launched"

        return launch


class FakeHeuristics:
    def __init__(self, fn):
        self.fn = fn
        self.values = {"EVEN": lambda a: a["n"] % a["BLOCK"] == 0}

    def __getitem__(self, grid):
        return self.fn[grid]


class FakeAutotuner:
    def __init__(self, fn):
        self.fn = fn
        self.best_config = types.SimpleNamespace(kwargs={"BLOCK": 64}, num_warps=8, num_stages=3, num_ctas=None,
                                                 maxnreg=None)

    def __getitem__(self, grid):
        return self.fn[grid]


class TensorDescriptor:
    """Named as triton's host-side TensorDescriptor: the recorder tells it by name."""

    def __init__(self, base, block_shape):
        self.base = base
        self.shape = list(base.shape)
        self.strides = list(base.stride())
        self.block_shape = block_shape


class Arguments(unittest.TestCase):
    """_Arguments gives what inspect's bind + apply_defaults give, with or without its fast path."""

    @staticmethod
    def bound(fn, *args, **kwargs):
        b = inspect.signature(fn).bind(*args, **kwargs)
        b.apply_defaults()
        return tuple(b.arguments.values())

    def test_positional_calls_match_bind_with_defaults(self):
        def stub(x, w, eps=1e-5, flag=None):
            return x

        a = rt._Arguments(inspect.signature(stub))
        for args in ((1, 2), (1, 2, 3), (1, 2, 3, 4)):
            self.assertEqual(a(args, {}), self.bound(stub, *args))
        self.assertEqual(a((1,), {"w": 2, "flag": 5}), self.bound(stub, 1, w=2, flag=5))

    def test_bad_calls_raise_as_bind_does(self):
        def stub(x, w, eps=1e-5):
            return x

        a = rt._Arguments(inspect.signature(stub))
        for args, kwargs in (((1,), {}), ((1, 2, 3, 4), {}), ((1, 2), {"x": 3}), ((1, 2), {"nope": 3})):
            with self.assertRaises(TypeError):
                a(args, kwargs)
        with self.assertRaises(TypeError):
            a.named((1, 2), {"w": 3})

    def test_star_args_and_keyword_only_go_through_bind(self):
        def stub(x, *rest, scale=2.0, **options):
            return x

        a = rt._Arguments(inspect.signature(stub))
        self.assertIsNone(a.defaults)
        self.assertEqual(a((1, 2, 3), {"k": 4}), self.bound(stub, 1, 2, 3, k=4))

    def test_named_gives_only_what_was_passed(self):
        def kernel(X, Y, n, BLOCK=16):
            return X

        a = rt._Arguments(inspect.signature(kernel))
        self.assertEqual(a.named(("x", "y"), {"n": 3}), {"X": "x", "Y": "y", "n": 3})
        self.assertEqual(a.named(("x",), {}), dict(inspect.signature(kernel).bind_partial("x").arguments))


class Recording(unittest.TestCase):
    def test_outside_capturing_a_launch_only_runs_the_kernel(self):
        jit = FakeJit()
        self.assertEqual(rt._Recorded(jit)[(3,)]("x", "y", 5), "launched")
        self.assertEqual(jit.launched, [((3,), ("x", "y", 5), {})])

    def test_records_the_grid_scalars_tensors_and_options(self):
        jit = FakeJit()
        recorded = rt._Recorded(jit)
        self.assertEqual(recorded.name, "kernel_fn")
        x, y = torch.ones(8), torch.zeros(8)
        seen = []

        def grid(meta):
            seen.append(dict(meta))
            return (meta["n"] // meta["BLOCK"], 2)

        with rt._capturing() as launches:
            recorded[grid](x, y, 256, BLOCK=16, num_warps=2)
            recorded[[4, 1]](x, Y=y, n=7)
            recorded[5](x, y, 1, scale=0.5)
        self.assertEqual(len(launches), 3)
        first = launches[0]
        self.assertIsInstance(first, rt._Launch)
        self.assertEqual(first.kernel, "kernel_fn")
        self.assertEqual(first.grid, (16, 2))
        self.assertEqual(first.args, {"n": 256, "scale": 2.0, "BLOCK": 16, "EVEN": None})
        self.assertEqual(first.options, {"num_warps": 2})
        self.assertEqual(set(first.tensors), {"X", "Y"})
        self.assertIs(first.tensors["X"], x)
        self.assertEqual(first.pre, {})
        # The grid callable sees the arguments, defaults and options; the kernel gets it unchanged.
        self.assertEqual(seen, [{"X": x, "Y": y, "n": 256, "scale": 2.0, "BLOCK": 16, "EVEN": None,
                                 "num_warps": 2}])
        self.assertIs(jit.launched[0][0], grid)
        self.assertEqual(launches[1].grid, (4, 1))
        self.assertIs(launches[1].tensors["Y"], y)
        self.assertEqual(launches[1].args["n"], 7)
        self.assertEqual((launches[2].grid, launches[2].args["scale"]), ((5,), 0.5))

    def test_records_the_config_autotune_chose_and_the_heuristics_values(self):
        jit = FakeJit()
        recorded = rt._Recorded(FakeAutotuner(FakeHeuristics(jit)))
        self.assertEqual(recorded.name, "kernel_fn")
        with rt._capturing() as launches:
            recorded[lambda meta: ((meta["n"] + meta["BLOCK"] - 1) // meta["BLOCK"],)]("x", "y", 200)
        (launch,) = launches
        self.assertEqual(launch.grid, (4,))
        self.assertEqual(launch.args, {"X": "x", "Y": "y", "n": 200, "scale": 2.0, "BLOCK": 64, "EVEN": False})
        self.assertEqual(launch.options, {"num_warps": 8, "num_stages": 3})
        self.assertEqual(launch.tensors, {})

    def test_a_tensor_descriptor_is_recorded_as_its_base_and_named_scalars(self):
        base = torch.zeros(6, 8)
        with rt._capturing() as launches:
            rt._Recorded(FakeJit())[(1,)](TensorDescriptor(base, [2, 4]), torch.ones(3), 6)
        (launch,) = launches
        self.assertIs(launch.tensors["X"], base)
        self.assertEqual({k: v for k, v in launch.args.items() if k.startswith("X_")},
                         {"X_shape0": 6, "X_shape1": 8, "X_stride0": 8, "X_stride1": 1, "X_block0": 2,
                          "X_block1": 4})

    def test_snapshots_hold_contents_from_before_launch_m(self):
        def bump(X, Y, n, **kwargs):
            X.add_(n)

        recorded = rt._Recorded(FakeJit(body=bump))
        x, z = transposed(2, 3), torch.full((4,), 10.0)
        x0 = x.clone()
        # Before launch 0: its own X (x); before launch 2: launch 1's X (z, after launch 1 bumped it).
        with rt._capturing({0: ((0, "X"),), 2: ((1, "X"),)}) as launches:
            recorded[(1,)](x, None, 1)
            recorded[(1,)](z, None, 5)
            recorded[(1,)](x, None, 100)
        self.assertEqual([sorted(launch.pre) for launch in launches], [["X"], ["X"], []])
        saved = launches[0].pre["X"]
        self.assertTrue(torch.equal(saved, x0))
        self.assertEqual(tuple(saved.stride()), (1, 2))
        self.assertTrue(torch.equal(x, x0 + 101))
        self.assertEqual(launches[1].pre["X"].tolist(), [15.0] * 4)
        self.assertIsNot(launches[1].pre["X"], z)

    def test_a_snapshot_is_taken_only_where_the_backward_reads_it(self):
        def bump(X, Y, n, **kwargs):
            X.add_(n)

        seen = []

        def reads(launches):  # as a module's _snapshots_read_<k>: by the launch's recorded scalars
            seen.append(len(launches))
            return launches[0].args["n"] > 10

        x = torch.zeros(4)
        for n, taken in ((1, []), (100, ["X"])):
            with rt._capturing({0: ((0, "X", reads),)}) as launches:
                rt._Recorded(FakeJit(body=bump))[(1,)](x, None, n)
            self.assertEqual(sorted(launches[0].pre), taken)
        self.assertEqual(seen, [1, 1])  # launch 0 recorded ahead of its own launch
        # An autotuned launch's values are known only as it runs: its copy is always taken.
        with rt._capturing({0: ((0, "X", reads),)}) as launches:
            rt._Recorded(FakeAutotuner(FakeJit(body=bump)))[(1,)](x, None, 1)
        self.assertEqual(sorted(launches[0].pre), ["X"])
        self.assertEqual(seen, [1, 1])
        # A test that fails (here: no such scalar) takes the copy; the backward says what is wrong.
        with rt._capturing({0: ((0, "X", lambda launches: launches[0].args["missing"]),)}) as launches:
            rt._Recorded(FakeJit(body=bump))[(1,)](x, None, 1)
        self.assertEqual(sorted(launches[0].pre), ["X"])

    def test_a_residual_buffer_is_allocated_per_program_of_the_grid_unless_passed(self):
        def saving(X, n, BLOCK=16, TAD_SAVED_0=None, TAD_SAVED_1__BLOCK=None):
            return X

        jit = FakeJit(fn=saving)
        recorded = rt._Recorded(jit)
        x = torch.ones(8)
        with rt._capturing() as launches:
            recorded[lambda meta: (meta["n"] // meta["BLOCK"], 3)](x, 64)
            recorded[(2,)](x.double(), 64)
            given = torch.zeros(5)
            recorded[(2,)](x, 64, TAD_SAVED_0=given)
        saved = [launch.tensors["TAD_SAVED_0"] for launch in launches]
        self.assertEqual([(t.shape, t.dtype) for t in saved[:2]],
                         [((12,), torch.float32), ((2,), torch.float64)])
        # a tile of BLOCK elements per program
        self.assertEqual(launches[0].tensors["TAD_SAVED_1__BLOCK"].shape, (12 * 16,))
        self.assertIs(saved[2], given)
        self.assertIs(jit.launched[0][2]["TAD_SAVED_0"], saved[0])
        with self.assertRaisesRegex(RuntimeError, "TAD_SAVED_ buffers need a grid known before the launch"):
            rt._Recorded(FakeAutotuner(FakeJit(fn=saving)))[(1,)](x, 64)

    def test_a_tile_saved_like_a_tensor_spans_it_to_the_end_of_its_storage(self):
        def saving(X, C, n, B_LIKE_C=4, TAD_SAVED_0_LIKE_C=None, TAD_SAVED_1__B_LIKE_C=None):
            return X

        jit = FakeJit(fn=saving)
        base = torch.zeros(6, 10)
        c = base[2:, 1:5]  # a view: its storage runs on past its last element
        with rt._capturing() as launches:
            rt._Recorded(jit)[(3,)](torch.ones(4), c, 1)
            rt._Recorded(jit)[(3,)](torch.ones(4).double(), c.double(), 1)
        saved = [launch.tensors["TAD_SAVED_0_LIKE_C"] for launch in launches]
        self.assertEqual([(t.shape, t.dtype) for t in saved],
                         [((60 - 21,), torch.float32), ((16,), torch.float64)])  # .double() copies: 4 x 4
        # a row vector whose dim's name holds "_LIKE_" is one: 3 programs of B_LIKE_C elements
        self.assertEqual(launches[0].tensors["TAD_SAVED_1__B_LIKE_C"].shape, (12,))
        # no grid is needed, so an autotuned kernel gets one too
        def saving_tile(X, C, n, TAD_SAVED_0_LIKE_C=None):
            return X

        with rt._capturing() as launches:
            rt._Recorded(FakeAutotuner(FakeJit(fn=saving_tile)))[(1,)](torch.ones(4), c, 1)
        self.assertEqual(launches[0].tensors["TAD_SAVED_0_LIKE_C"].shape, (39,))

    def test_a_residual_buffer_is_float64_where_a_descriptors_base_is(self):
        def saving(X, n, TAD_SAVED_0=None):
            return X

        with rt._capturing() as launches:
            rt._Recorded(FakeJit(fn=saving))[(2,)](TensorDescriptor(torch.zeros(4, 4).double(), [2, 2]), 4)
            rt._Recorded(FakeJit(fn=saving))[(2,)](TensorDescriptor(torch.zeros(4, 4), [2, 2]), 4)
        self.assertEqual([launch.tensors["TAD_SAVED_0"].dtype for launch in launches],
                         [torch.float64, torch.float32])

    def test_a_launch_outside_a_capture_runs_the_twin_without_the_saves(self):
        def saving(X, n, TAD_SAVED_0_LIKE_X=None):
            return X

        def plain_fn(X, n):
            return X

        jit, plain = FakeJit(fn=saving), FakeJit(fn=plain_fn)
        recorded = rt._Recorded(jit, plain=plain)
        x = torch.ones(4)
        recorded[(2,)](x, 4)  # not recorded: the twin, no buffer
        self.assertEqual([(grid, kwargs) for grid, _, kwargs in plain.launched], [((2,), {})])
        self.assertEqual(jit.launched, [])
        with rt._capturing() as launches:
            recorded[(2,)](x, 4)
        self.assertEqual(len(plain.launched), 1)
        self.assertEqual(launches[0].tensors["TAD_SAVED_0_LIKE_X"].shape, (4,))
        self.assertIs(jit.launched[0][2]["TAD_SAVED_0_LIKE_X"], launches[0].tensors["TAD_SAVED_0_LIKE_X"])

    def test_autograd_records_a_call_with_grad_mode_on_and_a_tensor_requiring_grad(self):
        w = torch.ones(2, requires_grad=True)
        self.assertTrue(rt._recorded_by_autograd((torch.ones(2), w, 3)))
        self.assertFalse(rt._recorded_by_autograd((torch.ones(2), 3, [w])))  # as Function.apply: no lists
        with torch.no_grad():
            self.assertFalse(rt._recorded_by_autograd((w,)))

    def test_capturing_nests_and_restores_the_outer_recording(self):
        recorded = rt._Recorded(FakeJit())
        with rt._capturing() as outer:
            recorded[(1,)]("a", "b", 1)
            with rt._capturing() as inner:
                recorded[(2,)]("a", "b", 2)
            recorded[(3,)]("a", "b", 3)
        self.assertEqual([launch.grid for launch in outer], [(1,), (3,)])
        self.assertEqual([launch.grid for launch in inner], [(2,)])
        self.assertIsNone(getattr(rt._capture, "launches", None))
        recorded[(4,)]("a", "b", 4)  # recorded nowhere
        self.assertEqual(len(outer) + len(inner), 3)


class ForwardModeHelpers(unittest.TestCase):
    def setUp(self):
        saved = jvp.GRAD_INPUTS
        jvp.GRAD_INPUTS = ("x", "w")
        self.addCleanup(setattr, jvp, "GRAD_INPUTS", saved)

    def test_tangent_list_orders_tangents_as_grad_inputs(self):
        a, b = torch.ones(2), torch.zeros(3)
        self.assertEqual(jvp._tangent_list(None), [None, None])
        self.assertEqual(jvp._tangent_list({"w": b}), [None, b])
        self.assertEqual(jvp._tangent_list((a, b)), [a, b])
        jvp.GRAD_INPUTS = ("x",)
        self.assertEqual(jvp._tangent_list(a), [a])

    def test_tangent_list_refuses_unknown_names_and_wrong_counts(self):
        with self.assertRaises(TypeError) as e:
            jvp._tangent_list({"x": None, "z": None, "b": None})
        self.assertEqual(str(e.exception), "tangents for ['b', 'z'], which are not GRAD_INPUTS ('x', 'w')")
        with self.assertRaises(TypeError) as e:
            jvp._tangent_list(torch.ones(2))
        self.assertEqual(str(e.exception), "1 tangents for 2 GRAD_INPUTS ('x', 'w')")

    def test_tangent_of_passes_a_tangent_with_the_inputs_layout(self):
        x = transposed(3, 4)
        v = torch.randn(4, 3).t()
        self.assertIs(jvp._tangent_of(v, x), v)

    def test_tangent_of_copies_into_the_inputs_layout_and_dtype(self):
        x = transposed(3, 4, torch.float16)
        v = torch.randn(3, 4)
        got = jvp._tangent_of(v, x)
        self.assertEqual((tuple(got.stride()), got.dtype), ((1, 3), torch.float16))
        self.assertTrue(torch.equal(got, v.to(torch.float16)))

    def test_tangent_of_a_written_input_is_a_copy(self):
        x = torch.ones(5)
        v = torch.randn(5)
        got = jvp._tangent_of(v, x, written=True)
        self.assertIsNot(got, v)
        self.assertTrue(torch.equal(got, v))
        got.add_(1)  # the tangent kernel updates it in place: the caller's v is untouched
        self.assertFalse(torch.equal(got, v))

    def test_tangent_of_none_is_zero_and_a_wrong_shape_is_an_error(self):
        x = transposed(2, 3)
        with garbage_memory():
            got = jvp._tangent_of(None, x)
        self.assertEqual(tuple(got.stride()), (1, 2))
        self.assertTrue(is_zero(got))
        with self.assertRaises(ValueError) as e:
            jvp._tangent_of(torch.ones(3, 2), x)
        self.assertEqual(str(e.exception), "a tangent of shape [3, 2] for an input of shape [2, 3]")

    def test_tangent_buffer_is_zeroed_with_the_outputs_layout(self):
        with garbage_memory():
            got = jvp._tangent_buffer((torch.Size([2, 3]), (1, 2), torch.float64, torch.device("cpu")))
        self.assertEqual((tuple(got.shape), tuple(got.stride()), got.dtype), ((2, 3), (1, 2), torch.float64))
        self.assertTrue(is_zero(got))


class ProgramBoxes(unittest.TestCase):
    """_program_box: the box a launch's programs map onto one to one, else None."""

    def setUp(self):
        rt._PROGRAM_BOXES.clear()

    def test_grouped_order_covers_its_box(self):
        tiles_n = 3
        self.assertEqual(rt._program_box((15,), lambda p: (p[0] // tiles_n, p[0] % tiles_n), ("a",)), (5, 3))

    def test_an_extra_program_is_no_box(self):
        self.assertIsNone(rt._program_box((16,), lambda p: (p[0] // 3, p[0] % 3), ("b",)))

    def test_a_persistent_loops_iterations_are_the_programs(self):
        # 3 programs walk 15 tiles t = p, p + 3, ...: every tile once.
        walk = (0, lambda p: (p[0], 15, 3))
        self.assertEqual(rt._program_box((3,), lambda p: (p[0] // 3, p[0] % 3), ("c",), tiles=walk), (5, 3))
        # 40 programs for 12 tiles: the 28 without a tile run no iteration.
        walk = (0, lambda p: (p[0], 12, 40))
        self.assertEqual(rt._program_box((40,), lambda p: (p[0] // 4, p[0] % 4), ("d",), tiles=walk), (3, 4))

    def test_a_stride_past_the_programs_gives_the_box_of_the_tiles_they_run(self):
        # 2 programs with stride 3 run the tiles of columns 0 and 1 only, as the forward did.
        walk = (0, lambda p: (p[0], 15, 3))
        self.assertEqual(rt._program_box((2,), lambda p: (p[0] // 3, p[0] % 3), ("e",), tiles=walk), (5, 2))
        # With 4 columns a program's walk wraps: tiles 0, 3, 6, .. are no box.
        self.assertIsNone(rt._program_box((2,), lambda p: (p[0] // 4, p[0] % 4), ("e2",), tiles=walk))

    def test_a_stride_below_the_programs_runs_tiles_twice(self):
        walk = (0, lambda p: (p[0], 15, 2))
        self.assertIsNone(rt._program_box((3,), lambda p: (p[0] // 3, p[0] % 3), ("f",), tiles=walk))

    def test_a_step_that_is_not_positive_is_no_box(self):
        walk = (0, lambda p: (p[0], 15, 0))
        self.assertIsNone(rt._program_box((3,), lambda p: (p[0] // 3, p[0] % 3), ("g",), tiles=walk))


class Embedded(unittest.TestCase):
    """A generated module holds each template's part below the marker, byte for byte."""

    def test_a_generated_module_carries_the_templates(self):
        import tad

        tmp = tempfile.mkdtemp(prefix="tad-py-")
        self.addCleanup(shutil.rmtree, tmp, True)
        session = tad.Session(work_dir=os.path.join(tmp, "work"), python=sys.executable)
        self.addCleanup(session.close)
        session.load_forward(os.path.join(_support.EXAMPLES, "gelu.py"))
        try:
            session.generate(dims={"n": 1000})
        except (tad.UnsupportedError, tad.WorkerError) as e:
            _support.skip(self, f"the pipeline cannot generate examples/gelu.py here: {e}")
        source = session.candidate_source()
        for name in ("module_runtime.py", "jvp_helpers.py"):
            part = embedded_part(name)
            self.assertGreater(len(part), 1000, name)
            self.assertIn("\n" + part + "\n", source, name)
            self.assertNotIn(MARKER, source)
        self.assertEqual(source.count("\nclass _Recorded:\n"), 1)

    def test_a_launch_node_module_carries_its_template(self):
        import tad

        tmp = tempfile.mkdtemp(prefix="tad-py-")
        self.addCleanup(shutil.rmtree, tmp, True)
        session = tad.Session(work_dir=os.path.join(tmp, "work"), python=sys.executable)
        self.addCleanup(session.close)
        session.load_forward(os.path.join(_support.REPO, "tests", "pipeline", "data", "torch_code", "sum_output.py"))
        try:
            session.generate(dims={"M": 4, "N": 32})
        except (tad.UnsupportedError, tad.WorkerError) as e:
            _support.skip(self, f"the pipeline cannot generate sum_output.py here: {e}")
        source = session.candidate_source()
        for name in ("module_runtime.py", "launch_nodes.py"):
            self.assertIn("\n" + embedded_part(name) + "\n", source, name)
        self.assertNotIn(MARKER, source)


if __name__ == "__main__":
    unittest.main()

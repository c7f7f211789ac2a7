"""tad's support kernels for backwards run without Python (src/aot, docs/aot.md).

The generated launcher does two things with torch that the CUDA driver-API executor does with these
instead, so that it needs nothing but cubins:
- tad_row_sum: a re-gridded kernel's partial rows (P rows of n elements) summed in row order,
  accumulated in float32 (float64 for float64 rows) and rounded once to the rows' dtype (torch's
  sum), then stored into Out, or with ADD added into it in float32 and rounded once (torch's add_);
- tad_cast: a gradient kept in float32 cast to its input's dtype (torch's .to), round to nearest
  even.
`rows` and `n` are never specialized (always i32, or i64 past the int32 range) and the pointers not
on alignment, so that one cubin per dtype combination serves every launch. The executor launches
them on cdiv(n, BLOCK) programs of WARPS warps (aot::kSupportBlock, aot::kSupportWarps).
"""

import triton
import triton.language as tl

BLOCK = 1024
WARPS = 4


@triton.jit(do_not_specialize=["rows", "n"], do_not_specialize_on_alignment=["Partial", "Out"])
def tad_row_sum(Partial, Out, rows, n, ADD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if Partial.dtype.element_ty == tl.float64:
        acc = tl.zeros([BLOCK], dtype=tl.float64)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
    for r in range(0, rows):
        acc += tl.load(Partial + r.to(tl.int64) * n + offs, mask=mask, other=0.0).to(acc.dtype)
    total = acc.to(Partial.dtype.element_ty)
    if ADD:
        total = tl.load(Out + offs, mask=mask, other=0.0).to(acc.dtype) + total.to(acc.dtype)
    tl.store(Out + offs, total.to(Out.dtype.element_ty), mask=mask)


@triton.jit(do_not_specialize=["n"], do_not_specialize_on_alignment=["Src", "Dst"])
def tad_cast(Src, Dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(Dst + offs, tl.load(Src + offs, mask=mask, other=0.0).to(Dst.dtype.element_ty), mask=mask)


def wide(dtype):
    """module_runtime.py's _wide_dtype(t, True) for a torch dtype."""
    import torch

    return torch.float64 if dtype == torch.float64 else torch.float32


def variants(dtypes):
    """The support launches an export of these torch dtypes may need: (kernel, pointer dtypes,
    constexprs) for every combination of the partial rows' dtype and the output's (each the dtype
    or its wide one), ADD or not, and the cast of the wide dtype to each dtype narrower than it."""
    out = []
    for d in dtypes:
        kinds = list(dict.fromkeys([wide(d), d]))
        for part in kinds:
            for dst in kinds:
                for add in (False, True):
                    out.append((tad_row_sum, (part, dst), {"ADD": add}))
        if wide(d) != d:
            out.append((tad_cast, (wide(d), d), {}))
    return out


def compile_variants(dtypes, device):
    """Compiles every variant for `n` in the int32 range and past it (warm-up only: nothing runs).
    Returns [(kernel name, compiled kernel, arguments by name)]."""
    import torch

    out = []
    for kernel, (a, b), constexprs in variants(dtypes):
        for n in (2, 2 ** 31):
            x, y = torch.empty(1, dtype=a, device=device), torch.empty(1, dtype=b, device=device)
            ints = (1, n) if kernel is tad_row_sum else (n,)
            args = (x, y, *ints)
            compiled = kernel.warmup(*args, **constexprs, BLOCK=BLOCK, grid=(1,), num_warps=WARPS)
            names = list(kernel.arg_names)
            out.append((kernel.fn.__name__, compiled, dict(zip(names, args), **constexprs, BLOCK=BLOCK)))
    return out

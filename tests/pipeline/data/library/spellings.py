"""Spellings kernel libraries use: the .cast method, tl.where with a constant condition, builtin min / max on run-time scalars, tl.multiple_of / tl.max_contiguous /
tl.assume hints, X.dtype.element_ty and X.type.element_ty, triton.next_power_of_2 and triton.cdiv
inside a kernel, and math functions of Python constants."""
import math

import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _spell_fwd(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.max_contiguous(tl.multiple_of(tl.arange(0, BLOCK), BLOCK), BLOCK)
    tl.assume(N > 0)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0).cast(tl.float32)
    x = x * math.log2(math.e) + math.sqrt(2.0) * math.pi
    HALF: tl.constexpr = triton.next_power_of_2(BLOCK) // 2
    CHUNKS: tl.constexpr = triton.cdiv(BLOCK, 4)
    y = tl.where(True, x * x, x) + tl.where(HALF > 1024, x, 0.0) * CHUNKS
    k = min(N, 5)
    j = max(N - 3, row)
    y = y * k + x * j
    tl.store(Y + row * N + cols, y.to(Y.dtype.element_ty) + x.to(X.type.element_ty), mask=m)


@tad.autodiff(grad_inputs=("x",))
def spellings(x):
    M, N = x.shape
    y = torch.empty_like(x)
    _spell_fwd[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 3, "N": 20}, {"M": 5, "N": 4}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {}

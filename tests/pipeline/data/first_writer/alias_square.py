"""One launch reads x through two parameters (y = x * x): its first and only backward adds both
gradients into x's shadow, atomically (a plain store of each would overwrite the other)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def mul_rev(A, B, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(A + offs, mask=mask)
    b = tl.load(B + offs, mask=mask)
    tl.store(Y + offs, a * b, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def alias_square(x):
    n = x.numel()
    y = torch.empty_like(x)
    mul_rev[(triton.cdiv(n, 64),)](x, x, y, n, BLOCK=64)
    return y


SWEEP = [{"n": 100}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["n"], dtype=dtype, device=device)
    return (x,), {}

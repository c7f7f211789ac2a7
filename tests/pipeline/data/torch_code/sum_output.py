"""The stub reduces the kernel's output with torch: y = Σ_rows x², a gradient tad must not lose."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def square(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, x * x, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def column_sum_of_squares(x):
    y = torch.empty_like(x)
    square[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y.sum(0)


SWEEP = [{"M": 4, "N": 32}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=dims.get("device", "cuda")),), {}


def reference(x):
    return (x * x).sum(0)

"""x *= y in place, where the stub passes the same tensor as X and Y: x <- x*x."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _mul_inplace(X, Y, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(X + offs, mask=mask, other=0.0)
    y = tl.load(Y + offs, mask=mask, other=0.0)
    tl.store(X + offs, x * y, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def square_(x):
    N = x.numel()
    _mul_inplace[(triton.cdiv(N, 16),)](x, x, N, BLOCK=16)
    return x


SWEEP = [{"N": 37}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["N"], dtype=dtype, device=device),), {}


def reference(x):
    return x * x

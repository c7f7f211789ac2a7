"""A stub that returns None among its outputs (`return y, None`, as libraries return an optional
statistic): the module keeps no layout for it and its gradient is None."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _square_fwd(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0)
    tl.store(Y + row * N + cols, x * x, mask=m)


@tad.autodiff(grad_inputs=("x",))
def returns_none(x):
    M, N = x.shape
    y = torch.empty_like(x)
    _square_fwd[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N))
    return y, None


SWEEP = [{"M": 3, "N": 20}, {"M": 2, "N": 7}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {}

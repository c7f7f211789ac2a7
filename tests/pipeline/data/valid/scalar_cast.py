"""Scalar arguments cast like tiles: a float argument cast to a tile's dtype (eps.to(x.dtype)) and to
a named dtype, an int argument to float32, inside and outside a loop."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _scalar_cast_fwd(X, Y, N, eps, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0)
    y = x * x + eps.to(x.dtype)
    y = y * scale.to(tl.float32) + N.to(tl.float32) * eps.to(tl.float32)
    for i in range(2):
        y = y * eps.to(y.dtype) + x
    tl.store(Y + row * N + cols, y, mask=m)


@tad.autodiff(grad_inputs=("x",))
def scalar_cast(x, eps=0.5):
    M, N = x.shape
    y = torch.empty_like(x)
    _scalar_cast_fwd[(M,)](x, y, N, eps, 3, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 3, "N": 20}, {"M": 2, "N": 7}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {}


def reference(x, eps=0.5):
    N = x.shape[1]
    y = (x * x + eps) * 3 + N * eps
    for _ in range(2):
        y = y * eps + x
    return y

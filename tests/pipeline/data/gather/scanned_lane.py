"""Rows of L < BLOCK per program: y[r] = x[r] + 0.5 * x[r - 1] * z[r], z read with a mask spelled by
a lane index a cumulative sum makes (no tl.arange). The copy of z's load would read r + 1 under the
mask of lane r: one element past the row, past z's end for the last row. Refused; the adds stay."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _cumoob(X, Z, Y, L, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    lane = tl.cumsum(tl.full([BLOCK], 1, tl.int32), 0) - 1
    base = tl.program_id(0) * L
    x = tl.load(X + base + r, mask=r < L, other=0.0)
    z = tl.load(Z + base + r, mask=lane < L, other=0.0)
    prev = tl.load(X + base + r - 1, mask=(r < L) & (r >= 1), other=0.0)
    tl.store(Y + base + r, x + 0.5 * prev * z, mask=r < L)


@tad.autodiff(grad_inputs=("x",))
def cumoob(x, z):
    B, L = x.shape
    y = torch.zeros_like(x)
    _cumoob[(B,)](x, z, y, L, BLOCK=16)
    return y


SWEEP = [{"B": 2, "L": 12}, {"B": 1, "L": 5}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["B"], dims["L"], dtype=dt, device=dev), torch.randn(dims["B"], dims["L"], dtype=dt, device=dev)), {}


def reference(x, z):
    prev = torch.cat([torch.zeros_like(x[:, :1]), x[:, :-1]], dim=1)
    return x + 0.5 * prev * z

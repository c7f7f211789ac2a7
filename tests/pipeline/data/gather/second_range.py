"""Rows of L per program; the loads go through tl.arange(0, BLOCK), the store through
tl.arange(0, BLOCK2), two constexprs of one value. dY is read through the second range, which the
copy of the shifted term would not shift. Refused ("varies along the shifted dim otherwise than
through the range"); the adds stay."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _tworange2(X, Y, L, BLOCK: tl.constexpr, BLOCK2: tl.constexpr):
    r = tl.arange(0, BLOCK)
    r2 = tl.arange(0, BLOCK2)
    base = tl.program_id(0) * L
    x = tl.load(X + base + r, mask=r < L, other=0.0)
    prev = tl.load(X + base + r - 1, mask=(r < L) & (r >= 1), other=0.0)
    tl.store(Y + base + r2, x + 0.5 * prev, mask=r2 < L)


@tad.autodiff(grad_inputs=("x",))
def tworange2(x):
    B, L = x.shape
    y = torch.zeros_like(x)
    _tworange2[(B,)](x, y, L, BLOCK=16, BLOCK2=16)
    return y


SWEEP = [{"B": 3, "L": 12}, {"B": 2, "L": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["B"], dims["L"], dtype=dt, device=dev),), {}


def reference(x):
    prev = torch.cat([torch.zeros_like(x[:, :1]), x[:, :-1]], dim=1)
    return x + 0.5 * prev

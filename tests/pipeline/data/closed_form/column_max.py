"""A maximum taken down the columns (keep_dims: shape [1, C]) and a sum along the rows: the rows of
y = exp(x - m) / rowsum(exp(x - m)) mix the columns' maxima, so y changes with them and their
gradient is not zero: the maximum must not be held constant (a rank-2 maximum's rows are its
columns)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _column_max(X, Y, R, C, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.arange(0, BR)
    cols = tl.arange(0, BC)
    mask = (rows[:, None] < R) & (cols[None, :] < C)
    x = tl.load(X + rows[:, None] * C + cols[None, :], mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0, keep_dims=True)
    e = tl.where(mask, tl.exp(x - m), 0.0)
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(Y + rows[:, None] * C + cols[None, :], y, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def column_max(x):
    R, C = x.shape
    y = torch.empty_like(x)
    _column_max[(1,)](x, y, R, C, BR=triton.next_power_of_2(R), BC=triton.next_power_of_2(C))
    return y


SWEEP = [{"R": 4, "C": 5}, {"R": 3, "C": 8}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["R"], dims["C"], dtype=dt, device=dev),), {}


def reference(x):
    e = torch.exp(x - x.max(dim=0, keepdim=True).values)
    return e / e.sum(dim=1, keepdim=True)

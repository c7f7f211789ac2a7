"""A scalar state per row over every other step from 1: h = h * a[t] + x[t] for t = 1, 3, 5, ...,
from h = 1, each state stored at Hs[row, t]. The state entering step t is read back from step
t - 2 (the loop's step), and the loop's first step takes the start value."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _strided_scalar(A, X, Hs, T):
    row = tl.program_id(0)
    h = 1.0
    for t in range(1, T, 2):
        a = tl.load(A + row * T + t)
        x = tl.load(X + row * T + t)
        h = h * a + x
        tl.store(Hs + row * T + t, h)


@tad.autodiff(grad_inputs=("a", "x"))
def strided_scalar(a, x):
    R, T = x.shape
    hs = torch.zeros_like(x)
    _strided_scalar[(R,)](a, x, hs, T)
    return hs


SWEEP = [{"R": 3, "T": 9}, {"R": 2, "T": 14}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    R, T = dims["R"], dims["T"]
    return (0.5 + 0.5 * torch.rand(R, T, dtype=dt, device=dev), torch.randn(R, T, dtype=dt, device=dev)), {}


def reference(a, x):
    R, T = x.shape
    h = torch.ones(R, dtype=x.dtype, device=x.device)
    cols = []
    for t in range(T):
        if t % 2 == 1:
            h = h * a[:, t] + x[:, t]
            cols.append(h)
        else:
            cols.append(torch.zeros_like(h))
    return torch.stack(cols, dim=1)

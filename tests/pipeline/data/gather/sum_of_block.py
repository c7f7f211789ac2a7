"""y[t] = s_p * (x[t] + 0.5 * x[t - 1]), s_p the sum of program p's rows of w [T, C] (tl.sum of a 2-D
tile with no axis: one reduction over every dim). The copy at t + 1 would sum a window one row on,
not the program's block. Refused ("moves the shifted lanes"); the adds stay."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _fullsum3(X, W, Y, T, C, BLOCK: tl.constexpr, BLOCK_C: tl.constexpr):
    ts = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cs = tl.arange(0, BLOCK_C)
    w = tl.load(W + ts[:, None] * C + cs[None, :], mask=(ts[:, None] < T) & (cs[None, :] < C), other=0.0)
    s = tl.sum(w)
    x = tl.load(X + ts, mask=ts < T, other=0.0)
    prev = tl.load(X + ts - 1, mask=(ts < T) & (ts > 0), other=0.0)
    tl.store(Y + ts, s * (x + 0.5 * prev), mask=ts < T)


@tad.autodiff(grad_inputs=("x",))
def fullsum3(x, w):
    T = x.shape[0]
    C = w.shape[1]
    y = torch.zeros_like(x)
    _fullsum3[(triton.cdiv(T, 8),)](x, w, y, T, C, BLOCK=8, BLOCK_C=4)
    return y


SWEEP = [{"T": 20, "C": 3}, {"T": 16, "C": 4}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["T"], dtype=dt, device=dev), torch.randn(dims["T"], dims["C"], dtype=dt, device=dev)), {}


def reference(x, w):
    T = x.shape[0]
    prev = torch.cat([torch.zeros_like(x[:1]), x[:-1]])
    s = torch.zeros_like(x)
    for b in range(0, T, 8):
        s[b:b + 8] = w[b:b + 8].sum()
    return s * (x + 0.5 * prev)

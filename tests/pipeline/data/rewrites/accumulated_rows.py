"""A row of y accumulated in memory across the steps of a loop (y <- y + w * x_t, loaded and stored
through one pointer each step): the backward does not follow values carried through memory from one
iteration to the next, so generation refuses it (carrying the sum in a variable works)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _accumulated_rows(X, W, Y, T, C, BLOCK_C: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.arange(0, BLOCK_C)
    mask = cols < C
    w = tl.load(W + cols, mask=mask, other=0.0)
    for t in range(T):
        acc = tl.load(Y + b * C + cols, mask=mask, other=0.0)
        x = tl.load(X + (b * T + t) * C + cols, mask=mask, other=0.0)
        tl.store(Y + b * C + cols, acc + w * x, mask=mask)


@tad.autodiff(grad_inputs=("x", "w"))
def accumulated_rows(x, w):
    B, T, C = x.shape
    y = torch.zeros((B, C), dtype=x.dtype, device=x.device)
    _accumulated_rows[(B,)](x, w, y, T, C, BLOCK_C=16)
    return y


SWEEP = [{"B": 2, "T": 3, "C": 10}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    x = torch.randn((dims["B"], dims["T"], dims["C"]), dtype=dt, device=dev)
    return (x, torch.randn((dims["C"],), dtype=dt, device=dev)), {}


def reference(x, w):
    return w * x.sum(dim=1)

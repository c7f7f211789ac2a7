"""A loop reads back, in iteration i, what it stored in iteration i-1 (a recurrence through memory)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def copy_k(X, H, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(H + offs, tl.load(X + offs, mask=mask), mask=mask)


@triton.jit
def scan(X, H, n, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    for i in range(1, STEPS):
        h = tl.load(H + (i - 1) * n + offs, mask=mask)
        tl.store(H + i * n + offs, tl.sin(h) * 1.5, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def loop_reread(x):
    n = x.numel()
    h = torch.empty(4 * n, dtype=x.dtype, device=x.device)
    copy_k[(1,)](x, h, n, BLOCK=64)
    scan[(1,)](x, h, n, STEPS=4, BLOCK=64)
    return h


SWEEP = [{"n": 50}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["n"], dtype=dtype, device=device),), {}

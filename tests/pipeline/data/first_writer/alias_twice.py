"""x read by three launches, the same kernel launched twice: the last reads h through two parameters,
so the shadow of h gets both gradients added, not stored (flow::first_writers)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def sinus(X, H, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(H + offs, tl.sin(x), mask=mask)


@triton.jit
def mix2(H, A, B, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    h = tl.load(H + offs, mask=mask)
    a = tl.load(A + offs, mask=mask)
    b = tl.load(B + (n - 1 - offs), mask=mask)
    tl.store(Y + offs, h * a + b * b, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def alias_twice(x):
    n = x.numel()
    h = torch.empty_like(x)
    g = torch.empty_like(x)
    y = torch.empty_like(x)
    grid = (triton.cdiv(n, 64),)
    sinus[grid](x, h, n, BLOCK=64)
    mix2[grid](h, x, x, g, n, BLOCK=64)
    mix2[grid](g, h, h, y, n, BLOCK=64)
    return y


SWEEP = [{"n": 100}, {"n": 300}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    n = dims["n"]
    x = torch.randn(n, dtype=dtype, device=device)
    return (x,), {}

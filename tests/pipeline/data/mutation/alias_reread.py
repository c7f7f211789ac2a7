"""A launch stores to T through one parameter and loads it back through another that aliases it."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def store_then_load(X, T_OUT, T_IN, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(T_OUT + offs, tl.sin(x), mask=mask)
    t = tl.load(T_IN + offs, mask=mask)
    tl.store(Y + offs, t * t, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def alias_reread(x):
    n = x.numel()
    t = torch.empty_like(x)
    y = torch.empty_like(x)
    grid = (triton.cdiv(n, 64),)
    store_then_load[grid](x, t, t, y, n, BLOCK=64)
    return y


SWEEP = [{"n": 100}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["n"], dtype=dtype, device=device),), {}


def reference(x):
    return torch.sin(x) ** 2

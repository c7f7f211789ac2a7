"""A stub input that is not a grad input (an out= buffer) written in place, updated, and returned."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def sin_into(X, O, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(O + offs, tl.sin(x), mask=mask)


@triton.jit
def mul_inplace(O, X, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    o = tl.load(O + offs, mask=mask)
    x = tl.load(X + offs, mask=mask)
    tl.store(O + offs, o * o * x, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def out_param(x, out):
    n = x.numel()
    grid = (triton.cdiv(n, 64),)
    sin_into[grid](x, out, n, BLOCK=64)
    mul_inplace[grid](out, x, n, BLOCK=64)
    return out


SWEEP = [{"n": 100}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    n = dims["n"]
    return (torch.randn(n, dtype=dtype, device=device), torch.randn(n, dtype=dtype, device=device)), {}


def reference(x, out):
    return torch.sin(x) ** 2 * x

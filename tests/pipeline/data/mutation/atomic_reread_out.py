"""A launch accumulates into Y with an atomic add, then loads Y back."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def acc_then_load(X, Y, Z, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.atomic_add(Y + offs, x * x, mask=mask)
    y = tl.load(Y + offs, mask=mask)
    tl.store(Z + offs, y * y, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def atomic_reread(x):
    n = x.numel()
    y = torch.zeros_like(x)
    z = torch.empty_like(x)
    acc_then_load[(triton.cdiv(n, 64),)](x, y, z, n, BLOCK=64)
    return z, y


SWEEP = [{"n": 100}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["n"], dtype=dtype, device=device),), {}


def reference(x):
    return x ** 4, x * x

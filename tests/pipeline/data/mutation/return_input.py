"""The stub returns one of its grad inputs unchanged beside a computed output."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def sq(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, x * x, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def return_input(x):
    n = x.numel()
    y = torch.empty_like(x)
    sq[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64)
    return y, x


SWEEP = [{"n": 100}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["n"], dtype=dtype, device=device),), {}


def reference(x):
    return x * x, x

"""One launch stores to Y twice: the second store overwrites the first."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def twice(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, x * x, mask=mask)
    tl.store(Y + offs, tl.sin(x), mask=mask)


@tad.autodiff(grad_inputs=("x",))
def double_store(x):
    n = x.numel()
    y = torch.empty_like(x)
    twice[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64)
    return y


SWEEP = [{"n": 100}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["n"], dtype=dtype, device=device),), {}


def reference(x):
    return torch.sin(x)

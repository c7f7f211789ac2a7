"""y = x * x over a 1-D tensor: small enough that the CPU tier checks it in seconds (the LLM
optimizer's tests, tests/optimize and tests/python/test_optimize.py)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _square(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n)
    tl.store(Y + offs, x * x, mask=offs < n)


@tad.autodiff(grad_inputs=("x",))
def square(x):
    y = torch.empty_like(x)
    _square[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y


SWEEP = [{"n": 100}]


def make_args(dims):
    return (torch.randn(dims["n"], dtype=getattr(torch, dims["dtype"]), device=dims["device"]),), {}

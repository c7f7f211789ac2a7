"""A forward file that starts with `from __future__ import annotations`, which Python accepts only
before every other statement, and annotates its stub."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

import tad


@triton.jit
def square(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, x * x, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def squares(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    square[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y


SWEEP = [{"n": 100}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["n"], dtype=dtype, device=dims.get("device", "cuda")),), {}

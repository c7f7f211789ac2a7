"""A load through a pointer chosen by tl.where (each element reads its pair partner) next to a plain
load of the same buffer: both loads carry gradient, so the backward accumulates into dX."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def pair_square(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    partner = tl.where(offs % 2 == 0, X + offs + 1, X + offs - 1)
    p = tl.load(partner, mask=mask)
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, p * p + x * p, mask=mask)


@tad.autodiff(grad_inputs=["x"])
def pair_square_stub(x):
    y = torch.empty_like(x)
    n = x.numel()
    pair_square[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64)
    return y


def make_args(dims):
    return (torch.randn(dims["n"], dtype=getattr(torch, dims["dtype"]), device=dims["device"]),), {}


SWEEP = [{"n": 256}, {"n": 4096}]

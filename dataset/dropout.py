"""Inverted dropout, y = x * keep / (1 - p), keep drawn by tl.rand from (seed, element index).

The stub also returns the keep mask (as x's dtype) so that a backward or a test can see which
elements survived. There is no reference(): PyTorch cannot reproduce triton's Philox stream, so
the gradient is checked against finite differences of the kernel itself (the mask is a
deterministic function of seed, so the kernel is an ordinary function of x).
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _dropout_fwd(X, Y, Keep, n, p, seed, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    # Seeding by global element index makes the mask independent of the block size.
    keep = tl.rand(seed, offs) > p
    y = tl.where(keep, x / (1.0 - p), 0.0)
    tl.store(Y + offs, y, mask=mask)
    tl.store(Keep + offs, keep.to(tl.float32), mask=mask)


@tad.autodiff(grad_inputs=("x",))
def dropout(x, p=0.5, seed=0):
    y = torch.empty_like(x)
    keep = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    _dropout_fwd[grid](x, y, keep, n, p, seed, BLOCK_SIZE=1024)
    return y, keep


SWEEP = [
    {"n": 1000, "p": 0.5},
    {"n": 15000, "p": 0.1},
    {"n": 1 << 24, "p": 0.1},
    {"n": 1 << 28, "p": 0.5, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["n"], dtype=dtype, device=device)
    return (x,), {"p": dims.get("p", 0.5), "seed": 1234}


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    # fwd: x in, y and keep out; bwd: dy and keep in, dx out.
    return dims["n"] * item * 3

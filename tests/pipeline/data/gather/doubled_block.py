"""A row of 2 * BLOCK elements per program, one element back too, BLOCK a constexpr the backward
serves several values of: the range's length '2 * BLOCK' is no name a launch records, so the bound
of the lanes run cannot be spelled. Refused; the adds stay."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _blk2n(X, Y, BLOCK: tl.constexpr):
    r = tl.arange(0, 2 * BLOCK)
    base = tl.program_id(0) * (2 * BLOCK)
    x = tl.load(X + base + r)
    prev = tl.load(X + base + r - 1, mask=r > 0, other=0.0)
    tl.store(Y + base + r, x + 0.5 * prev)


@tad.autodiff(grad_inputs=("x",))
def blk2n(x, block):
    B, L = x.shape
    y = torch.zeros_like(x)
    _blk2n[(B,)](x, y, BLOCK=block)
    return y


SWEEP = [{"B": 3, "block": 8}, {"B": 3, "block": 16}, {"B": 2, "block": 32}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["B"], 2 * dims["block"], dtype=dt, device=dev),), {"block": dims["block"]}


def reference(x, block):
    prev = torch.cat([torch.zeros_like(x[:, :1]), x[:, :-1]], dim=1)
    return x + 0.5 * prev

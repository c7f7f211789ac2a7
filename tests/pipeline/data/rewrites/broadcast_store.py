"""Every lane of one store writes the row's norm to the same element (Y + row + 0 * cols): no
backward tells the lanes' cotangents apart, so generation refuses it (a scalar store works)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _broadcast_store(X, Y, C, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < C
    x = tl.load(X + row * C + cols, mask=mask, other=0.0)
    s = tl.sum(x * x, axis=0)
    tl.store(Y + row + cols * 0, s + tl.zeros([BLOCK], tl.float32))


@tad.autodiff(grad_inputs=("x",))
def broadcast_store(x):
    R, C = x.shape
    y = torch.empty((R,), dtype=x.dtype, device=x.device)
    _broadcast_store[(R,)](x, y, C, BLOCK=16)
    return y


SWEEP = [{"R": 3, "C": 10}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn((dims["R"], dims["C"]), dtype=dt, device=dev),), {}


def reference(x):
    return (x * x).sum(dim=1)

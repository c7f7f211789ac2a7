"""A loop-carried pointer that starts in one buffer and moves to another: a load in the loop reads
either, and tad refuses it rather than drop a gradient."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def two_rows(A, B, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = A + offs
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, 2):
        v = tl.load(p)
        acc += v * v
        p = B + offs
    tl.store(Y + offs, acc)


@tad.autodiff(grad_inputs=["a", "b"])
def two_rows_stub(a, b):
    y = torch.empty_like(a)
    two_rows[(1,)](a, b, y, BLOCK=a.numel())
    return y


def make_args(dims):
    dtype = getattr(torch, dims["dtype"])
    return (torch.randn(32, dtype=dtype, device=dims["device"]), torch.randn(32, dtype=dtype, device=dims["device"])), {}


SWEEP = [{"n": 32}]

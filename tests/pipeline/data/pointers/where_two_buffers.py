"""A pointer that tl.where picks from two different buffers: tad cannot tell which buffer a load
reads, and refuses it rather than drop its gradient."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def pick(A, B, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(tl.where(offs < n // 2, A + offs, B + offs), mask=mask)
    tl.store(Y + offs, v * v, mask=mask)


@tad.autodiff(grad_inputs=["a", "b"])
def pick_stub(a, b):
    y = torch.empty_like(a)
    n = a.numel()
    pick[(triton.cdiv(n, 64),)](a, b, y, n, BLOCK=64)
    return y


def make_args(dims):
    dtype = getattr(torch, dims["dtype"])
    return (torch.randn(dims["n"], dtype=dtype, device=dims["device"]),
            torch.randn(dims["n"], dtype=dtype, device=dims["device"])), {}


SWEEP = [{"n": 256}]

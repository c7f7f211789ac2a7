"""A kernel overwrites a buffer torch computed from the grad input with values that depend on no
grad input: that launch's node would have to only zero the gradient, which tad refuses yet."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def fill(Y, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.zeros([BLOCK], dtype=tl.float32) + value, mask=offs < n)


@tad.autodiff(grad_inputs=("x",))
def sin_then_filled(x):
    y = torch.sin(x)
    fill[(triton.cdiv(x.numel(), 64),)](y, x.numel(), 2.0, BLOCK=64)
    return y * x


SWEEP = [{"n": 100}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["n"], dtype=dtype, device=dims.get("device", "cuda")),), {}

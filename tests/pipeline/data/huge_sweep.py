"""SWEEP entries far too large for the CPU tier: one that make_args builds on the meta device (sized
without allocating, then skipped), one whose make_args needs real data (it allocates on the host
and runs out of memory; optional, so skipped)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _double(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, 2.0 * tl.load(X + offs, mask=offs < n), mask=offs < n)


@tad.autodiff(grad_inputs=("x",))
def double(x):
    y = torch.empty_like(x)
    _double[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y


SWEEP = [{"n": 100}, {"n": 1 << 40, "required": False}, {"n": 1 << 40, "required": False, "host": True}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    x = torch.randn(dims["n"], dtype=dtype, device=dims.get("device", "cuda"))
    if dims.get("host"):
        x = torch.from_numpy(torch.randn(dims["n"], dtype=dtype, device="cpu").numpy())
    return (x,), {}

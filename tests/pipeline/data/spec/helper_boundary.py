"""A boundary check that only an inlined helper makes, on constexprs: rows whose length is a
multiple of the block are loaded without a mask. Before lowering recorded the helper's static `if`,
the backward generated for the even size ran unmasked for the other one."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _load_row(ptr, cols, N: tl.constexpr, BLOCK: tl.constexpr):
    if N % BLOCK == 0:
        x = tl.load(ptr + cols)
    else:
        x = tl.load(ptr + cols, mask=cols < N, other=0.0)
    return x


@triton.jit
def _square_fwd(X, Y, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = _load_row(X + row * N, cols, N, BLOCK)
    tl.store(Y + row * BLOCK + cols, x * x)


@tad.autodiff(grad_inputs=("x",))
def square(x, block=16):
    M, N = x.shape
    y = torch.empty(M, block, dtype=x.dtype, device=x.device)
    _square_fwd[(M,)](x, y, N=N, BLOCK=block)
    return y


SWEEP = [{"M": 3, "N": 16, "block": 16}, {"M": 4, "N": 20, "block": 32}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {"block": dims["block"]}

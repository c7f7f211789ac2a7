"""Tiles taken column-major from one grid axis (pid_m = pid % tiles_m, pid_n = pid // tiles_m),
launched with more programs than tiles: the extra programs' tiles lie past N, masked off. Their map
onto the coordinates is not one to one onto a box, so the backward derived from the original
kernel runs: the gradient is right either way."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _colmajor_square(X, Y, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % tiles_m
    pid_n = pid // tiles_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(X + rm[:, None] * N + rn[None, :], mask=m, other=0.0).to(tl.float32)
    tl.store(Y + rm[:, None] * N + rn[None, :], (x * x).to(Y.dtype.element_ty), mask=m)


@tad.autodiff(grad_inputs=("x",))
def colmajor_square(x, extra=0):
    M, N = x.shape
    y = torch.empty_like(x)
    grid = (triton.cdiv(M, 8) * triton.cdiv(N, 8) + extra,)
    _colmajor_square[grid](x, y, M, N, BLOCK_M=8, BLOCK_N=8)
    return y


SWEEP = [{"M": 20, "N": 13, "extra": 0}, {"M": 20, "N": 13, "extra": 2}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=dims.get("device", "cuda"))
    return (x,), {"extra": dims["extra"]}


def reference(x, extra=0):
    return x * x

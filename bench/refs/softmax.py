"""Row-wise softmax backward: dx = y * (dy - sum(dy * y)) per row, y the output the forward saves.

One program per row, the whole row in one block: reads y and dy once, writes dx once.
"""
import torch
import triton
import triton.language as tl

from ._common import nbytes, next_pow2, row_warps

GRAD_INPUTS = ("x",)


@triton.jit
def _softmax_bwd(Y, DY, DX, N, stride_y, stride_dy, stride_dx, BLOCK_N: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    y = tl.load(Y + r * stride_y + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(DY + r * stride_dy + cols, mask=mask, other=0.0).to(tl.float32)
    dot = tl.sum(y * dy, axis=0)
    tl.store(DX + r * stride_dx + cols, (y * (dy - dot)).to(DX.dtype.element_ty), mask=mask)


def save(x):
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def backward(x, *, grad_out, saved=None):
    y = saved if saved is not None else save(x)
    M, N = x.shape
    dy = grad_out.contiguous()
    dx = torch.empty_like(x)
    block = next_pow2(N)
    _softmax_bwd[(M,)](y, dy, dx, N, y.stride(0), dy.stride(0), dx.stride(0), BLOCK_N=block,
                       num_warps=row_warps(block))
    return (dx,)


def min_bytes(x):
    # Reads y and dy, writes dx.
    return 3 * nbytes(x)

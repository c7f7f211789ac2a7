"""Inclusive prefix sum along each row of x [M, N].

Each program scans BLOCK_M rows in column blocks of BLOCK_N: tl.cumsum scans within a block and a
per-row carry adds the totals of the blocks before it.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _cumsum_fwd(X, Y, M, N, stride_x, stride_y, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows[:, None] < M
    carry = tl.zeros([BLOCK_M], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_ok & (cols[None, :] < N)
        # Padding is 0 and sits after the real columns, so it changes neither scan nor carry.
        x = tl.load(X + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0)
        x = x.to(tl.float32)
        y = tl.cumsum(x, axis=1) + carry[:, None]
        tl.store(Y + rows[:, None] * stride_y + cols[None, :], y, mask=mask)
        carry += tl.sum(x, axis=1)


@tad.autodiff(grad_inputs=("x",))
def cumsum(x):
    M, N = x.shape
    y = torch.empty_like(x)
    block_n = min(triton.next_power_of_2(N), 1024)
    block_m = max(4096 // block_n, 1)
    grid = (triton.cdiv(M, block_m),)
    _cumsum_fwd[grid](x, y, M, N, x.stride(0), y.stride(0), BLOCK_M=block_m, BLOCK_N=block_n)
    return y


SWEEP = [
    {"M": 5, "N": 300},
    {"M": 8, "N": 2500},
    {"M": 4096, "N": 4096},
    {"M": 65536, "N": 512},
    {"M": 1024, "N": 65536, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {}


def reference(x):
    return torch.cumsum(x, dim=-1)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    return dims["M"] * dims["N"] * item * 2

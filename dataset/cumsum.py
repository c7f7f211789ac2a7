"""Inclusive prefix sum along each row of x [M, N].

Each program scans one row in blocks of BLOCK_N: tl.cumsum scans within a block and a running carry
adds the totals of the blocks before it.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _cumsum_fwd(X, Y, N, stride_x, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        # Padding is 0 and sits after the real columns, so it changes neither scan nor carry.
        x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(Y + row * stride_y + cols, y, mask=mask)
        carry += tl.sum(x, axis=0)


@tad.autodiff(grad_inputs=("x",))
def cumsum(x):
    M, N = x.shape
    y = torch.empty_like(x)
    block_n = min(triton.next_power_of_2(N), 1024)
    _cumsum_fwd[(M,)](x, y, N, x.stride(0), y.stride(0), BLOCK_N=block_n)
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

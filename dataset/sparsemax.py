"""Sparsemax over the rows of x [M, N] (Martins & Astudillo, 2016): the Euclidean projection of a
row onto the probability simplex, y = max(x - tau, 0). The stub sorts each row in descending order
with torch; the kernel finds the support size k = max{j : 1 + j z_j > z_1 + ... + z_j} of the sorted
row z by a cumulative sum, tau = (z_1 + ... + z_k - 1) / k, and writes y from the unsorted row.

The sort is torch code on a grad input, so x's gradient flows both through the sorted copy and
directly into the kernel.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _sparsemax_fwd(X, Z, Y, N, stride_x, stride_z, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    z = tl.load(Z + row * stride_z + cols, mask=mask, other=0.0).to(tl.float32)
    prefix = tl.cumsum(z, axis=0)
    rank = (cols + 1).to(tl.float32)
    support = mask & (1.0 + rank * z > prefix)
    k = tl.sum(support.to(tl.float32), axis=0)
    tau = (tl.sum(tl.where(support, z, 0.0), axis=0) - 1.0) / k
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride_y + cols, tl.maximum(x - tau, 0.0).to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x",))
def sparsemax(x):
    M, N = x.shape
    z = torch.sort(x, dim=-1, descending=True).values
    y = torch.empty_like(x)
    block = triton.next_power_of_2(N)
    _sparsemax_fwd[(M,)](x, z, y, N, x.stride(0), z.stride(0), y.stride(0), BLOCK_N=block,
                         num_warps=min(max(block // 256, 1), 8))
    return y


SWEEP = [
    {"M": 6, "N": 20},
    {"M": 9, "N": 100},
    {"M": 8192, "N": 1024},
    {"M": 4096, "N": 8192},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (2.0 * torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {}


def reference(x):
    z = torch.sort(x, dim=-1, descending=True).values
    rank = torch.arange(1, x.shape[-1] + 1, dtype=x.dtype, device=x.device)
    prefix = z.cumsum(-1)
    support = 1 + rank * z > prefix
    k = support.sum(-1, keepdim=True)
    tau = ((z * support).sum(-1, keepdim=True) - 1) / k
    return torch.clamp(x - tau, min=0)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["M"] * dims["N"]
    # fwd: x and its sorted copy in, y out; bwd: y, dy in, dx out (plus the sort's scatter).
    return n * item * (3 if mode == "fwd" else 4)

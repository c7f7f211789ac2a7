"""Segment sum with atomics: out[idx[i], :] += x[i, :] for x [N, D], int64 idx [N], out [S, D].

Rows of x that share a segment are added by different programs into the same output row, hence
tl.atomic_add; the gradient of x is a gather of the output gradient by idx.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _scatter_add_fwd(X, Idx, Out, N, D, stride_x, stride_out, BLOCK_N: tl.constexpr,
                     BLOCK_D: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    row_ok = rows < N
    mask = row_ok[:, None] & (cols[None, :] < D)
    x = tl.load(X + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0)
    seg = tl.load(Idx + rows, mask=row_ok, other=0)
    # Only the sum matters, not the order of the adds, so no ordering is needed.
    tl.atomic_add(Out + seg[:, None] * stride_out + cols[None, :], x, mask=mask, sem="relaxed")


@tad.autodiff(grad_inputs=("x",))
def scatter_add(x, idx, num_segments):
    N, D = x.shape
    # The kernel adds into out, so it starts at zero.
    out = torch.zeros(num_segments, D, dtype=x.dtype, device=x.device)
    block_d = min(triton.next_power_of_2(D), 256)
    grid = (triton.cdiv(N, 16), triton.cdiv(D, block_d))
    _scatter_add_fwd[grid](x, idx, out, N, D, x.stride(0), out.stride(0), BLOCK_N=16,
                           BLOCK_D=block_d)
    return out


SWEEP = [
    {"N": 100, "D": 40, "S": 7},
    {"N": 400, "D": 64, "S": 50},
    {"N": 65536, "D": 1024, "S": 4096},
    {"N": 262144, "D": 1024, "S": 256, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["N"], dims["D"], dtype=dtype, device=device)
    idx = torch.randint(0, dims["S"], (dims["N"],), dtype=torch.int64, device=device)
    return (x, idx), {"num_segments": dims["S"]}


def reference(x, idx, num_segments):
    out = torch.zeros(num_segments, x.shape[1], dtype=x.dtype, device=x.device)
    return out.index_add(0, idx, x)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    N, D, S = dims["N"], dims["D"], dims["S"]
    # fwd: x in, one atomic per element into out; bwd: a gather of dout into dx.
    return (2 * N * D + S * D) * item + N * 8

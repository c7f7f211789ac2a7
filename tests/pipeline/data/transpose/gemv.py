"""y = sigmoid(X) @ w in row blocks, each program looping over column tiles: w's gradient is shared by
every row block and moves with the loop (the loop transposition's case); X's is disjoint."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _gemv(X, W, Y, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for j in range(0, tl.cdiv(N, BLOCK_N)):
        cols = j * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(X + rows[:, None] * stride_m + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += tl.sum(tl.sigmoid(x) * w[None, :], axis=1)
    tl.store(Y + rows, acc, mask=rows < M)


@tad.autodiff(grad_inputs=("x", "w"))
def gemv(x, w):
    M, N = x.shape
    y = torch.empty(M, dtype=x.dtype, device=x.device)
    _gemv[(triton.cdiv(M, 4),)](x, w, y, M, N, x.stride(0), BLOCK_M=4, BLOCK_N=8)
    return y


DTYPES = [torch.float32]
SWEEP = [{"M": 10, "N": 21}, {"M": 17, "N": 8}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["M"], dims["N"], dtype=dt, device=dev), torch.randn(dims["N"], dtype=dt, device=dev)), {}


def reference(x, w):
    return torch.sigmoid(x) @ w

"""C = A @ B with the tiles in grouped order (GROUP_M row tiles walk down one column of tiles
before the next, so consecutive programs share B tiles in L2), as most tuned Triton matmuls order
them: the tile's row and column come from the program id through division, remainder and a min.
The backward runs on the tiles' own grid, where dA and dB are transposed (loop over the other
operand's tiles), wherever the launch's programs map one to one onto the tiles."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _grouped_mm(A, B, C, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows
    pid_n = (pid % per_group) // rows
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(A + rm[:, None] * K + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(B + ks[:, None] * N + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * N + rn[None, :], acc.to(C.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@tad.autodiff(grad_inputs=("a", "b"))
def grouped_mm(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, 16) * triton.cdiv(N, 16),)
    _grouped_mm[grid](a, b, c, M, N, K, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2)
    return c


# 5 row tiles in groups of 2 (the last group has one row), 3 column tiles; then 4 x 2.
SWEEP = [{"M": 70, "N": 40, "K": 20}, {"M": 64, "N": 17, "K": 33}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["K"], dtype=dtype, device=device),
            torch.randn(dims["K"], dims["N"], dtype=dtype, device=device)), {}


def reference(a, b):
    return a @ b

"""C = relu(A @ B) on a 2-D grid: the ReLU compares the accumulator itself, so the backward needs its
exact bits. Saved to a float32 buffer of tad's, it reads back exactly as computed, and the backward
runs no K loop (before session 17 it ran the whole loop again). Since it saves, the module carries the
kernel as written, renamed, for calls without grad; the kernel reassigns its constexpr BLOCK_K, which
the module's check excuses in the user's kernel and must excuse in that twin too (a review found
`tad generate` failing there)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _mm_relu(A, B, C, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    BLOCK_K = 16
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(A + rm[:, None] * K + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(B + ks[:, None] * N + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    out = tl.maximum(acc, 0.0)
    tl.store(C + rm[:, None] * N + rn[None, :], out.to(C.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@tad.autodiff(grad_inputs=("a", "b"))
def mm_relu(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    _mm_relu[(triton.cdiv(M, 16), triton.cdiv(N, 16))](a, b, c, M, N, K, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    return c


SWEEP = [{"M": 20, "N": 18, "K": 24}, {"M": 33, "N": 16, "K": 40}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    a = torch.randn(dims["M"], dims["K"], dtype=dtype, device=device)
    b = torch.randn(dims["K"], dims["N"], dtype=dtype, device=device)
    return (a, b), {}

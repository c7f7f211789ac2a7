"""C = A @ B with column-major A and B: the loop transposition's disjointness proof holds through
its other order of strides (stride_ak >= M * stride_am)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _mm(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        ks = k * BLOCK_K + rk
        a = tl.load(A + rm[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(B + ks[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(C + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tad.autodiff(grad_inputs=("a", "b"))
def mm(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    _mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
              BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    return c


DTYPES = [torch.float32]
SWEEP = [{"M": 20, "N": 18, "K": 37}, {"M": 33, "N": 7, "K": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    M, N, K = dims["M"], dims["N"], dims["K"]
    a = torch.randn(K, M, dtype=dt, device=dev).t()
    b = torch.randn(N, K, dtype=dt, device=dev).t()
    return (a, b), {}


def reference(a, b):
    return a @ b

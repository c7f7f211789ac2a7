"""A masked matmul saving v = 2 * acc under a narrower mask than t = acc * acc, stored under the full
one: acc, undone from v, would be read as 0 in columns the wider write keeps. Not read back (a
review's probe: a finite wrong gradient)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _k(A, B, Y, Z, T, M, N, K, L, stride_am, stride_ak, stride_bk, stride_bn, stride_ym, stride_yn,
       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    kk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        ks = k * BLOCK_K + kk
        a = tl.load(A + rm[:, None] * stride_am + ks[None, :] * stride_ak, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(B + ks[:, None] * stride_bk + rn[None, :] * stride_bn, mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    v = acc * 2.0
    z = v * v
    t = acc * acc
    offs = stride_ym * rm[:, None] + stride_yn * rn[None, :]
    full = (rm[:, None] < M) & (rn[None, :] < N)
    narrow = full & (rn[None, :] < L)
    tl.store(Y + offs, v, mask=narrow)
    tl.store(Z + offs, z, mask=narrow)
    tl.store(T + offs, t, mask=full)


@tad.autodiff(grad_inputs=("a", "b"))
def f(a, b):
    M, K = a.shape
    N = b.shape[1]
    L = N // 2
    y = torch.zeros(M, N, dtype=a.dtype, device=a.device)
    z = torch.zeros(M, N, dtype=a.dtype, device=a.device)
    t = torch.zeros(M, N, dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    _k[grid](a, b, y, z, t, M, N, K, L, a.stride(0), a.stride(1), b.stride(0), b.stride(1), y.stride(0),
             y.stride(1), BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    return y, z, t


DTYPES = [torch.float32]
SWEEP = [{"M": 37, "N": 29, "K": 20}, {"M": 21, "N": 40, "K": 9}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    M, N, K = dims["M"], dims["N"], dims["K"]
    return (torch.randn(M, K, dtype=dt, device=dev) / K ** 0.5, torch.randn(K, N, dtype=dt, device=dev)), {}


def reference(a, b):
    c = a @ b
    N = b.shape[1]
    L = N // 2
    cols = torch.arange(N, device=a.device) < L
    y = torch.where(cols, 2 * c, torch.zeros_like(c))
    return y, y * y, c * c

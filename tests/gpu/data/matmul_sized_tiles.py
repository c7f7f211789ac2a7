"""C = A @ B with block sizes the stub picks from the sizes, as an autotuner may pick another config
at other sizes: traced at the first SWEEP entry (64 x 128 x 32 tiles), run at the second (64 x 64 x
64). The transposed dA kernel's widened BLOCK_K must be sized from the launch's tiles: a factor of
8 fixed at the traced 64 x 32 tile made it 512 at the second, where Triton 3.6 computes the float32
dot of a 64-row tile and a transposed 512-wide one wrong on the H100."""
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
    tl.store(C + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(C.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@tad.autodiff(grad_inputs=("a", "b"))
def mm(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    block_n = 128 if N >= 256 else 64
    block_k = 32 if K <= 64 else 64
    grid = (triton.cdiv(M, 64), triton.cdiv(N, block_n))
    _mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
              BLOCK_M=64, BLOCK_N=block_n, BLOCK_K=block_k)
    return c


SWEEP = [{"M": 64, "N": 256, "K": 64}, {"M": 100, "N": 130, "K": 70}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    M, N, K = dims["M"], dims["N"], dims["K"]
    a = torch.randn(M, K, dtype=dt, device=dev) / K ** 0.5
    b = torch.randn(K, N, dtype=dt, device=dev)
    return (a, b), {}


def reference(a, b):
    return a @ b

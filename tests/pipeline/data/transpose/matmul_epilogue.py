"""y = silu(A @ B + bias) in (m, n) tiles. dA and dB need dZ = dY * silu'(Z) at every step of their
reverse K loop, and Z = A @ B + bias comes from the forward's own K loop: the transposed dA and dB
kernels load dZ from a stash the rest of the backward stores once per program."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _mm_silu(A, B, Bias, Y, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_ym, stride_yn,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(A + rm[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(B + ks[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    z = acc + tl.load(Bias + rn, mask=rn < N, other=0.0)[None, :]
    y = z * tl.sigmoid(z)
    tl.store(Y + rm[:, None] * stride_ym + rn[None, :] * stride_yn, y, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tad.autodiff(grad_inputs=("a", "b", "bias"))
def mm_silu(a, b, bias):
    M, K = a.shape
    N = b.shape[1]
    y = torch.empty(M, N, dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    _mm_silu[grid](a, b, bias, y, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), y.stride(0),
                   y.stride(1), BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    return y


DTYPES = [torch.float32]
SWEEP = [{"M": 40, "N": 50, "K": 37}, {"M": 33, "N": 20, "K": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    M, N, K = dims["M"], dims["N"], dims["K"]
    return (torch.randn(M, K, dtype=dt, device=dev) / K ** 0.5, torch.randn(K, N, dtype=dt, device=dev),
            torch.randn(N, dtype=dt, device=dev)), {}


def reference(a, b, bias):
    return torch.nn.functional.silu(a @ b + bias)

"""The Triton tutorial's matmul (rows wrapped `% M`) whose K loop keeps a running maximum of the tile
products from -1e4, `acc = tl.maximum(acc, tl.dot(a, b))`, with a leaky ReLU after. Forward mode
carries acc's tangent from zero (its start is a constant): that zero must be made before the loop
(a review's probe crashed `tad generate`: the tangent loop's carried zero was made inside it)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _leaky(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def _mm_wrapped(A, B, Y, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_ym, stride_yn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    group = pid // per_group
    first_m = group * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % per_group) % rows_in_group)
    pid_n = (pid % per_group) // rows_in_group
    am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    kk = tl.arange(0, BLOCK_K)
    a_ptrs = A + (am[:, None] * stride_am + kk[None, :] * stride_ak)
    b_ptrs = B + (kk[:, None] * stride_bk + bn[None, :] * stride_bn)
    acc = tl.full((BLOCK_M, BLOCK_N), -1.0e4, dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=kk[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=kk[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.maximum(acc, tl.dot(a, b))
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    y = _leaky(acc).to(Y.dtype.element_ty)
    ym = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    yn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(Y + stride_ym * ym[:, None] + stride_yn * yn[None, :], y, mask=(ym[:, None] < M) & (yn[None, :] < N))


@tad.autodiff(grad_inputs=("a", "b"))
def mm_wrapped(a, b):
    M, K = a.shape
    N = b.shape[1]
    y = torch.empty(M, N, dtype=a.dtype, device=a.device)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    _mm_wrapped[grid](a, b, y, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), y.stride(0),
                      y.stride(1), BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=4)
    return y


DTYPES = [torch.float32]
SWEEP = [{"M": 37, "N": 29, "K": 50}, {"M": 64, "N": 48, "K": 32}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    M, N, K = dims["M"], dims["N"], dims["K"]
    return (torch.randn(M, K, dtype=dt, device=dev) / K ** 0.5, torch.randn(K, N, dtype=dt, device=dev)), {}


def reference(a, b):
    K = a.shape[1]
    acc = None
    for k0 in range(0, K, 16):
        p = a[:, k0:k0 + 16] @ b[k0:k0 + 16, :]
        acc = p if acc is None else torch.maximum(acc, p)
    return torch.nn.functional.leaky_relu(acc, 0.01)

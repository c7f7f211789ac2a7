"""C = A @ B written the way the Triton tutorial's matmul is, for the bench suite: one program axis
walked in groups of GROUP_M row tiles (L2 reuse), row and column offsets wrapped (% M, % N) rather
than masked, pointers advanced in place, only the K tail masked, autotuned tiles. tad unwraps its
adds and transposes dA and dB (passes/unwrap_adds.h); bench/refs/matmul.py (cuBLAS) is the
hand-written backward it is timed against."""
import torch
import triton
import triton.language as tl

import tad


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def _mm_tutorial(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % per_group) % rows_in_group)
    pid_n = (pid % per_group) // rows_in_group
    am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    kk = tl.arange(0, BLOCK_K)
    a_ptrs = A + am[:, None] * stride_am + kk[None, :] * stride_ak
    b_ptrs = B + kk[:, None] * stride_bk + bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=kk[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=kk[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(C + stride_cm * cm[:, None] + stride_cn * cn[None, :], acc.to(C.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


@tad.autodiff(grad_inputs=("a", "b"))
def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    _mm_tutorial[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    return c


SWEEP = [{"M": 4096, "N": 4096, "K": 4096}, {"M": 8192, "N": 8192, "K": 8192, "required": False}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float16"))
    device = dims.get("device", "cuda")
    M, N, K = dims["M"], dims["N"], dims["K"]
    return (torch.randn(M, K, dtype=dtype, device=device), torch.randn(K, N, dtype=dtype, device=device)), {}


def reference(a, b):
    return a @ b


def flops(dims, mode):
    f = 2 * dims["M"] * dims["N"] * dims["K"]
    return f if mode == "fwd" else 2 * f

"""C = A @ B with block pointers: boundary checks with zero padding replace explicit masks."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _matmul_bp_fwd(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                   stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_block = tl.make_block_ptr(A, shape=(M, K), strides=(stride_am, stride_ak),
                                offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K),
                                order=(1, 0))
    b_block = tl.make_block_ptr(B, shape=(K, N), strides=(stride_bk, stride_bn),
                                offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N),
                                order=(1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        a = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        a_block = tl.advance(a_block, (0, BLOCK_K))
        b_block = tl.advance(b_block, (BLOCK_K, 0))
    c_block = tl.make_block_ptr(C, shape=(M, N), strides=(stride_cm, stride_cn),
                                offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                                block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    tl.store(c_block, acc.to(C.dtype.element_ty), boundary_check=(0, 1))


@tad.autodiff(grad_inputs=("a", "b"))
def matmul_block_ptr(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    # fp32 tiles take twice the shared memory: a shorter BLOCK_K keeps three stages in it.
    block_k = 64 if a.element_size() <= 2 else 32
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    _matmul_bp_fwd[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                         c.stride(0), c.stride(1), BLOCK_M=128, BLOCK_N=128, BLOCK_K=block_k,
                         num_warps=8, num_stages=3)
    return c


SWEEP = [
    {"M": 37, "N": 29, "K": 50},
    {"M": 130, "N": 100, "K": 150},
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 8192, "K": 8192, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N, K = dims["M"], dims["N"], dims["K"]
    a = torch.randn(M, K, dtype=dtype, device=device) / K ** 0.5
    b = torch.randn(K, N, dtype=dtype, device=device)
    return (a, b), {}


def reference(a, b):
    return a @ b


def flops(dims, mode):
    f = 2 * dims["M"] * dims["N"] * dims["K"]
    return f if mode == "fwd" else 2 * f

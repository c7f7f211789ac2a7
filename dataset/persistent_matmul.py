"""C = A @ B by a persistent kernel: a fixed number of programs (one per SM on a GPU) each walk the
output tiles tile = pid, pid + NUM_PROGRAMS, ... in grouped order (GROUP_M tile rows at a time, so
neighbouring programs share A and B tiles in L2), the inner K loop accumulating tl.dot in fp32."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _persistent_matmul_fwd(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                           stride_cn, NUM_PROGRAMS: tl.constexpr, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    tiles_per_group = GROUP_M * num_pid_n
    rk = tl.arange(0, BLOCK_K)
    for tile in range(pid, num_tiles, NUM_PROGRAMS):
        first_m = (tile // tiles_per_group) * GROUP_M
        group_m = tl.minimum(num_pid_m - first_m, GROUP_M)
        pid_m = first_m + (tile % tiles_per_group) % group_m
        pid_n = (tile % tiles_per_group) // group_m
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        a_ptrs = A + rm[:, None] * stride_am + rk[None, :] * stride_ak
        b_ptrs = B + rk[:, None] * stride_bk + rn[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            # Zero padding past K adds nothing to the dot product.
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c_ptrs = C + rm[:, None] * stride_cm + rn[None, :] * stride_cn
        tl.store(c_ptrs, acc.to(C.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def _num_sms(device):
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 2  # a CPU run still gives each program several tiles


@tad.autodiff(grad_inputs=("a", "b"))
def persistent_matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    # Small problems get small tiles, so that they still have more tiles than programs.
    block = 128 if min(M, N) >= 1024 else 32
    # fp32 tiles take twice the shared memory: a shorter BLOCK_K keeps three stages in it.
    block_k = 64 if a.element_size() <= 2 else 32
    num_tiles = triton.cdiv(M, block) * triton.cdiv(N, block)
    num_programs = min(num_tiles, _num_sms(a.device))
    _persistent_matmul_fwd[(num_programs,)](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        NUM_PROGRAMS=num_programs, BLOCK_M=block, BLOCK_N=block, BLOCK_K=block_k, GROUP_M=8,
        num_warps=8, num_stages=3)
    return c


SWEEP = [
    {"M": 70, "N": 45, "K": 40},
    {"M": 100, "N": 37, "K": 20},
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 8192, "K": 8192, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N, K = dims["M"], dims["N"], dims["K"]
    # 1/sqrt(K) keeps C of unit scale whatever K is.
    a = torch.randn(M, K, dtype=dtype, device=device) / K ** 0.5
    b = torch.randn(K, N, dtype=dtype, device=device)
    return (a, b), {}


def reference(a, b):
    return a @ b


def flops(dims, mode):
    f = 2 * dims["M"] * dims["N"] * dims["K"]
    return f if mode == "fwd" else 2 * f

"""dataset/matmul_bias_act.py with its constexpr GROUP_M reassigned in the kernel: the accumulator is saved
(the epilogue needs it), so the module carries the kernel as written, renamed, for calls without grad.
The module's check excuses the reassignment in the user's kernel; its twin is the same code, excused
the same way (a review found `tad generate` failing there)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _gelu(x):
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))


@triton.jit
def _matmul_bias_act_fwd(A, B, Bias, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                         stride_cm, stride_cn, ACTIVATION: tl.constexpr, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Consecutive programs walk GROUP_M row tiles down one column of tiles, so the B tiles they
    # share are still in L2.
    GROUP_M = 8
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in tl.range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(A + rm[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(B + ks[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    bias = tl.load(Bias + rn, mask=rn < N, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    if ACTIVATION == "gelu":
        acc = _gelu(acc)
    elif ACTIVATION == "relu":
        acc = tl.maximum(acc, 0.0)
    c_ptrs = C + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(C.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@tad.autodiff(grad_inputs=("a", "b", "bias"))
def matmul_bias_act(a, b, bias, activation="gelu"):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    _matmul_bias_act_fwd[grid](a, b, bias, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                               b.stride(1), c.stride(0), c.stride(1), ACTIVATION=activation,
                               BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, num_warps=8,
                               num_stages=3)
    return c


SWEEP = [
    {"M": 37, "N": 29, "K": 50, "activation": "gelu"},
    {"M": 100, "N": 130, "K": 70, "activation": "relu"},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N, K = dims["M"], dims["N"], dims["K"]
    a = torch.randn(M, K, dtype=dtype, device=device) / K ** 0.5
    b = torch.randn(K, N, dtype=dtype, device=device)
    bias = 0.1 * torch.randn(N, dtype=dtype, device=device)
    return (a, b, bias), {"activation": dims.get("activation", "gelu")}


def reference(a, b, bias, activation="gelu"):
    z = a @ b + bias
    return torch.nn.functional.gelu(z) if activation == "gelu" else torch.relu(z)


def flops(dims, mode):
    f = 2 * dims["M"] * dims["N"] * dims["K"]
    return f if mode == "fwd" else 2 * f

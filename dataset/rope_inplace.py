"""Rotary position embedding applied in place to q and k [B, H, N, D] (rotate-half form), as
attention layers do right before attention: the stub overwrites q and k and returns them. Tables
cos, sin [N, D/2].

Each program rotates BLOCK_N positions of one (batch, head) of both tensors: it reads each half
of a row before it writes either half back.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _rotate_rows(T, Cos, Sin, base, rows, cols, mask, stride_n, stride_t, HALF):
    ptrs = T + base + rows[:, None] * stride_n + cols[None, :]
    a = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(ptrs + HALF, mask=mask, other=0.0).to(tl.float32)
    t_offs = rows[:, None] * stride_t + cols[None, :]
    c = tl.load(Cos + t_offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(Sin + t_offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(ptrs, (a * c - b * s).to(T.dtype.element_ty), mask=mask)
    tl.store(ptrs + HALF, (b * c + a * s).to(T.dtype.element_ty), mask=mask)


@triton.jit
def _rope_qk_inplace(Q, K, Cos, Sin, stride_qb, stride_qh, stride_qn, stride_kb, stride_kh,
                     stride_kn, stride_t, H, N, HALF, BLOCK_N: tl.constexpr,
                     BLOCK_D: tl.constexpr):
    pid_bh = tl.program_id(0)
    pid_n = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    rows = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = tl.arange(0, BLOCK_D)
    mask = (rows[:, None] < N) & (cols[None, :] < HALF)
    _rotate_rows(Q, Cos, Sin, b * stride_qb + h * stride_qh, rows, cols, mask, stride_qn,
                 stride_t, HALF)
    _rotate_rows(K, Cos, Sin, b * stride_kb + h * stride_kh, rows, cols, mask, stride_kn,
                 stride_t, HALF)


@tad.autodiff(grad_inputs=("q", "k"))
def rope_qk_(q, k, cos, sin):
    B, H, N, D = q.shape
    half = D // 2
    block_n = 32
    grid = (B * H, triton.cdiv(N, block_n))
    _rope_qk_inplace[grid](q, k, cos, sin, q.stride(0), q.stride(1), q.stride(2), k.stride(0),
                           k.stride(1), k.stride(2), cos.stride(0), H, N, half,
                           BLOCK_N=block_n, BLOCK_D=triton.next_power_of_2(half))
    return q, k


SWEEP = [
    {"B": 1, "H": 2, "N": 37, "D": 16},
    {"B": 2, "H": 2, "N": 50, "D": 48},
    {"B": 8, "H": 32, "N": 2048, "D": 128},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    B, H, N, D = dims["B"], dims["H"], dims["N"], dims["D"]
    q = torch.randn(B, H, N, D, dtype=dtype, device=device)
    k = torch.randn(B, H, N, D, dtype=dtype, device=device)
    inv_freq = 10000.0 ** (-torch.arange(0, D // 2, dtype=torch.float64, device=device) / (D // 2))
    angles = torch.arange(N, dtype=torch.float64, device=device)[:, None] * inv_freq[None, :]
    return (q, k, angles.cos().to(dtype), angles.sin().to(dtype)), {}


def reference(q, k, cos, sin):
    def rotate(x):
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    return rotate(q), rotate(k)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["B"] * dims["H"] * dims["N"] * dims["D"]
    # q and k read and written in place (their gradients likewise); the tables stay in L2.
    return (4 * n + dims["N"] * dims["D"]) * item

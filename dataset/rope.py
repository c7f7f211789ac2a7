"""Rotary position embedding (rotate-half form) of x [B, H, N, D] with tables cos, sin [N, D/2].

Each program rotates BLOCK_N positions of one (batch, head); the tables are read by all B * H
programs that cover the same positions.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _rope_fwd(X, Cos, Sin, Y, stride_xb, stride_xh, stride_xn, stride_yb, stride_yh, stride_yn,
              stride_t, H, N, HALF, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_bh = tl.program_id(0)
    pid_n = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    rows = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = tl.arange(0, BLOCK_D)
    mask = (rows[:, None] < N) & (cols[None, :] < HALF)
    x_ptrs = X + b * stride_xb + h * stride_xh + rows[:, None] * stride_xn + cols[None, :]
    x1 = tl.load(x_ptrs, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptrs + HALF, mask=mask, other=0.0).to(tl.float32)
    t_offs = rows[:, None] * stride_t + cols[None, :]
    c = tl.load(Cos + t_offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(Sin + t_offs, mask=mask, other=0.0).to(tl.float32)
    y_ptrs = Y + b * stride_yb + h * stride_yh + rows[:, None] * stride_yn + cols[None, :]
    tl.store(y_ptrs, x1 * c - x2 * s, mask=mask)
    tl.store(y_ptrs + HALF, x2 * c + x1 * s, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def rope(x, cos, sin):
    B, H, N, D = x.shape
    y = torch.empty_like(x)
    half = D // 2
    block_n = 32
    grid = (B * H, triton.cdiv(N, block_n))
    _rope_fwd[grid](x, cos, sin, y, x.stride(0), x.stride(1), x.stride(2),
                    y.stride(0), y.stride(1), y.stride(2), cos.stride(0), H, N, half,
                    BLOCK_N=block_n, BLOCK_D=triton.next_power_of_2(half))
    return y


SWEEP = [
    {"B": 1, "H": 2, "N": 37, "D": 16},
    {"B": 2, "H": 2, "N": 100, "D": 48},
    {"B": 8, "H": 32, "N": 2048, "D": 128},
    {"B": 16, "H": 32, "N": 4096, "D": 128, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    B, H, N, D = dims["B"], dims["H"], dims["N"], dims["D"]
    x = torch.randn(B, H, N, D, dtype=dtype, device=device)
    inv_freq = 10000.0 ** (-torch.arange(0, D // 2, dtype=torch.float64, device=device) / (D // 2))
    angles = torch.arange(N, dtype=torch.float64, device=device)[:, None] * inv_freq[None, :]
    return (x, angles.cos().to(dtype), angles.sin().to(dtype)), {}


def reference(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["B"] * dims["H"] * dims["N"] * dims["D"]
    # x in, y out (dy in, dx out for the backward); the tables are small and stay in L2.
    return (2 * n + dims["N"] * dims["D"]) * item

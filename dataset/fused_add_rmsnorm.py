"""Fused residual add and RMSNorm, as inference engines write it: h = x + residual is written back
into residual in place (the new residual stream), and y = h / rms(h) * weight is returned with it.

One program per row. The stub returns (y, residual); residual is updated, so callers pass a tensor
autograd may modify (not a leaf that requires grad).
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _fused_add_rmsnorm_fwd(X, Res, W, Y, stride_x, stride_res, stride_y, N, eps,
                           BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(Res + row * stride_res + cols, mask=mask, other=0.0).to(tl.float32)
    h = x + r
    # The row is read in full before it is overwritten, and only by this program.
    tl.store(Res + row * stride_res + cols, h.to(Res.dtype.element_ty), mask=mask)
    rstd = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride_y + cols, (h * rstd * w).to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x", "residual", "weight"))
def fused_add_rmsnorm(x, residual, weight, eps=1e-6):
    M, N = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(N)
    _fused_add_rmsnorm_fwd[(M,)](x, residual, weight, y, x.stride(0), residual.stride(0),
                                 y.stride(0), N, eps, BLOCK_N=block,
                                 num_warps=min(max(block // 256, 1), 8))
    return y, residual


SWEEP = [
    {"M": 5, "N": 40},
    {"M": 9, "N": 700},
    {"M": 8192, "N": 4096},
    {"M": 16384, "N": 8192, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N = dims["M"], dims["N"]
    x = torch.randn(M, N, dtype=dtype, device=device)
    residual = torch.randn(M, N, dtype=dtype, device=device)
    weight = 1.0 + 0.1 * torch.randn(N, dtype=dtype, device=device)
    return (x, residual, weight), {"eps": 1e-6}


def reference(x, residual, weight, eps=1e-6):
    h = x + residual
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * weight, h


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    M, N = dims["M"], dims["N"]
    # fwd: x, residual in, residual, y out; bwd: h, dy, dh in, dx (= dresidual) out.
    return (4 * M * N + N) * item if mode == "fwd" else (4 * M * N + 2 * N) * item

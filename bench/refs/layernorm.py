"""Persistent LayerNorm backward for y = (x - mean) * rstd * w + b over the last dim.

With xhat = (x - mean) * rstd and g = dy * w per row:
    dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
    dw = sum over rows of dy * xhat,  db = sum over rows of dy.
P programs (about k x #SMs) each take rows p, p + P, ...; a program writes dx of its rows and keeps
its share of dw and db in float32 registers, flushed once into [P, N] partials that torch sums.
mean and rstd are the ones the forward saves.
"""
import torch
import triton
import triton.language as tl

from ._common import nbytes, next_pow2, persistent_programs, row_warps

GRAD_INPUTS = ("x", "weight", "bias")


@triton.jit
def _layernorm_bwd(X, W, DY, Mean, Rstd, DX, DWp, DBp, M, N, stride_x, stride_dy, stride_dx,
                   BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_N], dtype=tl.float32)
    for row in range(pid, M, programs):
        r = row.to(tl.int64)
        x = tl.load(X + r * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + r * stride_dy + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.load(Mean + r)
        rstd = tl.load(Rstd + r)
        # Masked lanes must not count in the row means below.
        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        g = dy * w
        c_xhat = tl.sum(g * xhat, axis=0) / N
        c_one = tl.sum(g, axis=0) / N
        dx = (g - xhat * c_xhat - c_one) * rstd
        tl.store(DX + r * stride_dx + cols, dx.to(DX.dtype.element_ty), mask=mask)
        dw += dy * xhat
        db += dy
    tl.store(DWp + pid * N + cols, dw, mask=mask)
    tl.store(DBp + pid * N + cols, db, mask=mask)


def save(x, weight, bias, eps=1e-5):
    xf = x.float()
    var, mean = torch.var_mean(xf, dim=-1, unbiased=False)
    return mean.contiguous(), torch.rsqrt(var + eps).contiguous()


def backward(x, weight, bias, eps=1e-5, *, grad_out, saved=None):
    mean, rstd = saved if saved is not None else save(x, weight, bias, eps)
    M, N = x.shape
    dy = grad_out.contiguous()
    dx = torch.empty_like(x)
    block = next_pow2(N)
    programs = persistent_programs(x.device, M, block)
    dw_part = torch.empty(programs, N, dtype=torch.float32, device=x.device)
    db_part = torch.empty(programs, N, dtype=torch.float32, device=x.device)
    _layernorm_bwd[(programs,)](x, weight, dy, mean, rstd, dx, dw_part, db_part, M, N, x.stride(0),
                                dy.stride(0), dx.stride(0), BLOCK_N=block,
                                num_warps=row_warps(block))
    return dx, dw_part.sum(0).to(weight.dtype), db_part.sum(0).to(bias.dtype)


def min_bytes(x, weight, bias, eps=1e-5):
    # Reads x, dy, w; writes dx, dw, db.
    return 3 * nbytes(x) + 3 * nbytes(weight)

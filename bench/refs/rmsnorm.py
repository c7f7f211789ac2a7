"""Persistent RMSNorm backward for y = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps).

With xhat = x * rstd and g = dy * w per row:
    dx = rstd * (g - xhat * mean(g * xhat)),  dw = sum over rows of dy * xhat.
P programs (about k x #SMs) each take rows p, p + P, ...; dw is kept in float32 registers and
flushed once into [P, N] partials that torch sums. rstd is the one the forward saves.
"""
import torch
import triton
import triton.language as tl

from ._common import nbytes, next_pow2, persistent_programs, row_warps

GRAD_INPUTS = ("x", "weight")


@triton.jit
def _rmsnorm_bwd(X, W, DY, Rstd, DX, DWp, M, N, stride_x, stride_dy, stride_dx,
                 BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    for row in range(pid, M, programs):
        r = row.to(tl.int64)
        x = tl.load(X + r * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + r * stride_dy + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(Rstd + r)
        xhat = x * rstd
        g = dy * w
        c_xhat = tl.sum(g * xhat, axis=0) / N
        dx = (g - xhat * c_xhat) * rstd
        tl.store(DX + r * stride_dx + cols, dx.to(DX.dtype.element_ty), mask=mask)
        dw += dy * xhat
    tl.store(DWp + pid * N + cols, dw, mask=mask)


def save(x, weight, eps=1e-6):
    xf = x.float()
    return torch.rsqrt(xf.pow(2).mean(dim=-1) + eps).contiguous()


def backward(x, weight, eps=1e-6, *, grad_out, saved=None):
    rstd = saved if saved is not None else save(x, weight, eps)
    M, N = x.shape
    dy = grad_out.contiguous()
    dx = torch.empty_like(x)
    block = next_pow2(N)
    programs = persistent_programs(x.device, M, block)
    dw_part = torch.empty(programs, N, dtype=torch.float32, device=x.device)
    _rmsnorm_bwd[(programs,)](x, weight, dy, rstd, dx, dw_part, M, N, x.stride(0), dy.stride(0),
                              dx.stride(0), BLOCK_N=block, num_warps=row_warps(block))
    return dx, dw_part.sum(0).to(weight.dtype)


def min_bytes(x, weight, eps=1e-6):
    # Reads x, dy, w; writes dx, dw.
    return 3 * nbytes(x) + 2 * nbytes(weight)

"""GroupNorm backward for y = (x - mean) * rstd * w[c] + b[c], x [N, C, HW] in G groups of C/G
channels.

With xhat = (x - mean) * rstd and g = dy * w[c], per sample and group (S = C/G * HW elements):
    dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),
    dw[c] = sum over samples and HW of dy * xhat,  db[c] = sum over samples and HW of dy.
Both group means follow from per-(sample, channel) sums a = sum_HW dy and b = sum_HW dy * xhat:
mean(g) = sum_c w[c] * a / S and mean(g * xhat) = sum_c w[c] * b / S. So one kernel, a program per
(sample, channel) row of HW elements, reduces a and b; torch folds those [N, C] floats into dw, db
and the two group means; a second kernel, elementwise over x, writes dx. x and dy are read twice,
dx is written once. mean and rstd are the ones the forward saves ([N, G], float32).
"""
import torch
import triton
import triton.language as tl

from ._common import nbytes, next_pow2

GRAD_INPUTS = ("x", "weight", "bias")


@triton.jit
def _channel_sums(X, DY, Mean, Rstd, A, B, C, G, HW, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # sample * C + channel
    group = (row // C) * G + (row % C) // (C // G)
    mean = tl.load(Mean + group)
    rstd = tl.load(Rstd + group)
    base = row.to(tl.int64) * HW
    a = tl.zeros([BLOCK], dtype=tl.float32)
    b = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, HW, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < HW
        x = tl.load(X + base + offs, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + base + offs, mask=mask, other=0.0).to(tl.float32)
        a += dy
        b += dy * (x - mean) * rstd  # masked lanes have dy = 0
    tl.store(A + row, tl.sum(a, axis=0))
    tl.store(B + row, tl.sum(b, axis=0))


@triton.jit
def _group_norm_dx(X, DY, W, Mean, Rstd, MeanG, MeanGX, DX, C, G, HW, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    channel = row % C
    group = (row // C) * G + channel // (C // G)
    mean = tl.load(Mean + group)
    rstd = tl.load(Rstd + group)
    mean_g = tl.load(MeanG + group)
    mean_gx = tl.load(MeanGX + group)
    w = tl.load(W + channel).to(tl.float32)
    base = row.to(tl.int64) * HW
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    x = tl.load(X + base + offs, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(DY + base + offs, mask=mask, other=0.0).to(tl.float32)
    xhat = (x - mean) * rstd
    dx = rstd * (dy * w - mean_g - xhat * mean_gx)
    tl.store(DX + base + offs, dx.to(DX.dtype.element_ty), mask=mask)


def save(x, weight, bias, num_groups, eps=1e-5):
    var, mean = torch.var_mean(x.float().reshape(x.shape[0], num_groups, -1), dim=-1, unbiased=False)
    return mean.contiguous(), torch.rsqrt(var + eps).contiguous()


def backward(x, weight, bias, num_groups, eps=1e-5, *, grad_out, saved=None):
    mean, rstd = saved if saved is not None else save(x, weight, bias, num_groups, eps)
    N, C, HW = x.shape
    G = num_groups
    x, dy = x.contiguous(), grad_out.contiguous()
    a = torch.empty(N, C, dtype=torch.float32, device=x.device)
    b = torch.empty_like(a)
    block = min(next_pow2(HW), 4096)
    _channel_sums[(N * C,)](x, dy, mean, rstd, a, b, C, G, HW, BLOCK=block,
                            num_warps=8 if block >= 2048 else 4)
    w = weight.float()
    size = (C // G) * HW
    mean_g = ((a * w).view(N, G, C // G).sum(-1) / size).contiguous()
    mean_gx = ((b * w).view(N, G, C // G).sum(-1) / size).contiguous()
    dx = torch.empty_like(x)
    block_dx = min(next_pow2(HW), 1024)
    _group_norm_dx[(N * C, triton.cdiv(HW, block_dx))](x, dy, weight, mean, rstd, mean_g, mean_gx,
                                                         dx, C, G, HW, BLOCK=block_dx, num_warps=4)
    return dx, b.sum(0).to(weight.dtype), a.sum(0).to(bias.dtype)


def min_bytes(x, weight, bias, num_groups, eps=1e-5):
    # Reads x and dy, writes dx; reads w, writes dw and db.
    return 3 * nbytes(x) + 3 * nbytes(weight)

"""Batch and head from one grid axis, as attention kernels take them (off_z = off_hz // H, off_h =
off_hz % H), with a per-head weight: y[z, h, m] = x[z, h, m] * w[h]. The access analysis follows
such a split of an axis by a divisor already (grid axis 1 // H, % H), so the program ids are not
remapped: a rewrite that proves no more of its loads is not worth its kernels."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _head_scale(X, W, Y, H, S, D, stride_z, stride_h, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    start = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    base = off_z * stride_z + off_h * stride_h
    rows = start * BLOCK_S + tl.arange(0, BLOCK_S)
    cols = tl.arange(0, BLOCK_D)
    m = (rows[:, None] < S) & (cols[None, :] < D)
    x = tl.load(X + base + rows[:, None] * D + cols[None, :], mask=m, other=0.0).to(tl.float32)
    w = tl.load(W + off_h * D + cols, mask=cols < D, other=0.0).to(tl.float32)
    tl.store(Y + base + rows[:, None] * D + cols[None, :], (x * w[None, :]).to(Y.dtype.element_ty), mask=m)


@tad.autodiff(grad_inputs=("x", "w"))
def head_scale(x, w):
    Z, H, S, D = x.shape
    y = torch.empty_like(x)
    grid = (triton.cdiv(S, 8), Z * H)
    _head_scale[grid](x, w, y, H, S, D, x.stride(0), x.stride(1), BLOCK_S=8, BLOCK_D=triton.next_power_of_2(D))
    return y


SWEEP = [{"Z": 2, "H": 3, "S": 11, "D": 5}, {"Z": 3, "H": 2, "S": 16, "D": 8}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["Z"], dims["H"], dims["S"], dims["D"], dtype=dtype, device=device)
    w = torch.randn(dims["H"], dims["D"], dtype=dtype, device=device)
    return (x, w), {}


def reference(x, w):
    return x * w[None, :, None, :]

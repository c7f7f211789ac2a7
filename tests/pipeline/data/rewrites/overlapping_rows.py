"""A diagonal recurrence whose stored states may overlap: row t of hs starts S elements after row
t - 1, so where S < C a later step overwrites the end of the row before. Its backward reads each
state's gradient once, which holds where S >= C: the module checks that when the backward runs and
refuses the overlapping layout (passes/rewrites.h)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _overlapping_rows(X, W, Hs, T, C, stride_hb, stride_ht, BLOCK_C: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.arange(0, BLOCK_C)
    mask = cols < C
    w = tl.load(W + cols, mask=mask, other=0.0)
    h = tl.zeros([BLOCK_C], dtype=tl.float32)
    for t in range(T):
        h = w * h + tl.load(X + (b * T + t) * C + cols, mask=mask, other=0.0)
        tl.store(Hs + b * stride_hb + t * stride_ht + cols, h, mask=mask)


@tad.autodiff(grad_inputs=("x", "w"))
def overlapping_rows(x, w, row_step):
    B, T, C = x.shape
    hs = torch.zeros((B, (T - 1) * row_step + C), dtype=x.dtype, device=x.device)
    _overlapping_rows[(B,)](x, w, hs, T, C, hs.stride(0), row_step, BLOCK_C=16)
    return hs


SWEEP = [{"B": 2, "T": 5, "C": 12, "S": 12}, {"B": 2, "T": 5, "C": 12, "S": 8}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    x = torch.randn((dims["B"], dims["T"], dims["C"]), dtype=dt, device=dev)
    return (x, 0.5 * torch.rand((dims["C"],), dtype=dt, device=dev), dims["S"]), {}


def reference(x, w, row_step):
    B, T, C = x.shape
    h = torch.zeros_like(x[:, 0])
    rows = []
    for t in range(T):
        h = w * h + x[:, t]
        rows.append(h)
    hs = torch.zeros((B, (T - 1) * row_step + C), dtype=x.dtype, device=x.device)
    for t, r in enumerate(rows):
        hs = torch.cat([hs[:, : t * row_step], r, hs[:, t * row_step + C :]], dim=1)
    return hs

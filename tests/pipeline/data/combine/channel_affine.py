"""A per-channel affine map y = x * scale[c] + shift[c] of x [N, C, HW], one program per sample
walking its C*HW elements in blocks: a block's channel is `offs // HW`, so the backward adds whole
blocks of dScale and dShift lanes into one channel or several (atomic adds by segments). The SWEEP
puts HW above the block (one channel per block), between half the block and the block (two), below
(several: one add per channel), and at 1 (32 channels per block, past the 16 a block adds by
channel: the lanes' own adds)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _channel_affine(X, S, B, Y, C, HW, BLOCK: tl.constexpr):
    n = tl.program_id(0)
    size = C * HW
    X += n * size
    Y += n * size
    for start in range(0, size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < size
        ch = offs // HW
        x = tl.load(X + offs, mask=mask, other=0.0)
        s = tl.load(S + ch, mask=mask, other=0.0)
        b = tl.load(B + ch, mask=mask, other=0.0)
        tl.store(Y + offs, x * s + b, mask=mask)


@tad.autodiff(grad_inputs=("x", "scale", "shift"))
def channel_affine(x, scale, shift):
    N, C, HW = x.shape
    y = torch.empty_like(x)
    _channel_affine[(N,)](x, scale, shift, y, C, HW, BLOCK=32)
    return y


SWEEP = [{"N": 3, "C": 4, "HW": 40}, {"N": 2, "C": 5, "HW": 24}, {"N": 2, "C": 6, "HW": 5},
         {"N": 2, "C": 40, "HW": 1}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    N, C, HW = dims["N"], dims["C"], dims["HW"]
    x = torch.randn(N, C, HW, dtype=dt, device=dev)
    return (x, torch.randn(C, dtype=dt, device=dev), torch.randn(C, dtype=dt, device=dev)), {}


def reference(x, scale, shift):
    return x * scale[:, None] + shift[:, None]

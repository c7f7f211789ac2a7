"""A per-channel affine map y = x * p[c, 0] + p[c, 1] of x [N, C, HW] with the scale and shift
packed in one tensor p [C, 2], one program per sample walking its C*HW elements in blocks: the
backward adds into p at `2 * (offs // HW)` and one past it, offsets that are monotone in the lane
but step by 2 (no run of consecutive addresses: combined atomic adds, not segments). The SWEEP
puts HW above the block (one channel per block), between half the block and the block (two), and
below (several: the lanes' own adds)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _packed_affine(X, P, Y, C, HW, BLOCK: tl.constexpr):
    n = tl.program_id(0)
    size = C * HW
    X += n * size
    Y += n * size
    for start in range(0, size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < size
        at = 2 * (offs // HW)
        x = tl.load(X + offs, mask=mask, other=0.0)
        s = tl.load(P + at, mask=mask, other=0.0)
        b = tl.load(P + at + 1, mask=mask, other=0.0)
        tl.store(Y + offs, x * s + b, mask=mask)


@tad.autodiff(grad_inputs=("x", "p"))
def packed_affine(x, p):
    N, C, HW = x.shape
    y = torch.empty_like(x)
    _packed_affine[(N,)](x, p, y, C, HW, BLOCK=16)
    return y


SWEEP = [{"N": 3, "C": 4, "HW": 40}, {"N": 2, "C": 5, "HW": 12}, {"N": 2, "C": 6, "HW": 5}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    N, C, HW = dims["N"], dims["C"], dims["HW"]
    x = torch.randn(N, C, HW, dtype=dt, device=dev)
    return (x, torch.randn(C, 2, dtype=dt, device=dev)), {}


def reference(x, p):
    return x * p[:, 0, None] + p[:, 1, None]

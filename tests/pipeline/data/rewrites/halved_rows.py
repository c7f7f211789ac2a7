"""Two steps write each output row: step t scales row t of x into row t // 2 of y (its first half;
the rest stays zero), so that only the later of each pair (and the last step) survives. The backward must see that the earlier write was
lost: its x gets no gradient (passes/rewrites.h: the shadow of y is read at the last write and
zeroed)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _halved_rows(X, W, Y, T, C, BLOCK_C: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.arange(0, BLOCK_C)
    mask = cols < C
    w = tl.load(W + cols, mask=mask, other=0.0)
    for t in range(T):
        x = tl.load(X + (b * T + t) * C + cols, mask=mask, other=0.0)
        tl.store(Y + (b * T + t // 2) * C + cols, w * x, mask=mask)


@tad.autodiff(grad_inputs=("x", "w"))
def halved_rows(x, w):
    B, T, C = x.shape
    y = torch.zeros_like(x)
    _halved_rows[(B,)](x, w, y, T, C, BLOCK_C=16)
    return y


SWEEP = [{"B": 2, "T": 6, "C": 10}, {"B": 3, "T": 5, "C": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    x = torch.randn((dims["B"], dims["T"], dims["C"]), dtype=dt, device=dev)
    return (x, torch.randn((dims["C"],), dtype=dt, device=dev)), {}


def reference(x, w):
    T = x.shape[1]
    last = [min(2 * k + 1, T - 1) for k in range((T + 1) // 2)]
    return torch.cat([w * x[:, last], torch.zeros_like(x[:, (T + 1) // 2 :])], dim=1)

"""y = x * a + b per row, the stub passing one tensor w as both a and b.

Both gradients are summed over the rows: re-gridded, each would flush its partial rows into the
partial buffer of w, the second overwriting the first. The plan refuses that with the workaround
(TAD_GRID_REDUCTION=atomic: each program adds its sums into w's gradient)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _scale_shift(X, Y, A, B, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0)
    a = tl.load(A + cols, mask=mask, other=0.0)
    b = tl.load(B + cols, mask=mask, other=0.0)
    tl.store(Y + row * stride + cols, x * a + b, mask=mask)


@tad.autodiff(grad_inputs=("x", "w"))
def tied(x, w):
    M, N = x.shape
    y = torch.empty_like(x)
    _scale_shift[(M,)](x, y, w, w, x.stride(0), N, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 5, "N": 8}, {"M": 9, "N": 20}]


def make_args(dims):
    dt = getattr(torch, dims.get("dtype", "float32"))
    dev = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dt, device=dev), torch.randn(dims["N"], dtype=dt, device=dev)), {}


def reference(x, w):
    return x * w + w

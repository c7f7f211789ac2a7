"""A forward that stores its output short of the row (cols < N - 1, the last column left as the
stub's zeros): the gradient's stores mirror that store, and the last column of dX, which no store
reaches, must read as zero (the launcher left it uninitialised, trusting the forward to fill its
output; a review found it)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _scale(X, Y, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N - 1
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0)
    tl.store(Y + row * stride + cols, x * 2.0, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def scale(x):
    M, K = x.shape
    y = torch.zeros_like(x)
    _scale[(M,)](x, y, K, x.stride(0), BLOCK=triton.next_power_of_2(K + 1))
    return y


DTYPES = [torch.float32]
SWEEP = [{"M": 5, "K": 7}, {"M": 3, "K": 12}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["M"], dims["K"], dtype=dt, device=dev),), {}


def reference(x):
    y = x * 2.0
    y[:, -1] = 0.0
    return y

"""Two halves of one row of X: y = where(x1 > 0, x0, 0) with x0 = X[:, :N] and x1 = X[:, N:]. The
second half only decides, so its gradient is zero: the backward stores zeros there, since the
buffer is left unfilled where the stores of both halves cover it (it left dX[:, N:] unwritten; a
review found it)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _gate_half(X, Y, N, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x0 = tl.load(X + row * stride_x + cols, mask=mask, other=0.0)
    x1 = tl.load(X + row * stride_x + N + cols, mask=mask, other=0.0)
    tl.store(Y + row * stride_y + cols, tl.where(x1 > 0, x0, 0.0), mask=mask)


@tad.autodiff(grad_inputs=("x",))
def gate_half(x):
    M, N2 = x.shape
    N = N2 // 2
    y = torch.empty(M, N, dtype=x.dtype, device=x.device)
    _gate_half[(M,)](x, y, N, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(N))
    return y


DTYPES = [torch.float32]
SWEEP = [{"M": 5, "N": 8}, {"M": 3, "N": 13}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["M"], 2 * dims["N"], dtype=dt, device=dev),), {}


def reference(x):
    N = x.shape[1] // 2
    return torch.where(x[:, N:] > 0, x[:, :N], torch.zeros_like(x[:, :N]))

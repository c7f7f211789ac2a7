"""An output that is a view (a transpose of the kernel's output) and an input that is not
contiguous (a transposed tensor read through its strides): gradients keep each tensor's layout."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _scale_fwd(X, Y, N, stride_xm, stride_xn, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * stride_xm + cols * stride_xn, mask=m, other=0.0)
    tl.store(Y + row * N + cols, x * x + 2.0 * x, mask=m)


@tad.autodiff(grad_inputs=("x",))
def views_and_strides(x):
    M, N = x.shape
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    _scale_fwd[(M,)](x, y, N, x.stride(0), x.stride(1), BLOCK=triton.next_power_of_2(N))
    return y.t()


SWEEP = [{"M": 3, "N": 20}, {"M": 2, "N": 7}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["N"], dims["M"], dtype=dtype, device=device).t(),), {}

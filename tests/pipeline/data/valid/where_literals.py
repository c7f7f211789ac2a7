"""tl.where between two Python numbers of different types (an int and a float): the emitted backward
must spell the int as a float, not as `0.to(tl.float32)`, which is not Python."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _where_fwd(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0)
    s = tl.where(x > 0, 0, -1.5)
    t = tl.where(x > 0.5, 2, 1)
    tl.store(Y + row * N + cols, (x + s) * x * t, mask=m)


@tad.autodiff(grad_inputs=("x",))
def where_literals(x):
    M, N = x.shape
    y = torch.empty_like(x)
    _where_fwd[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 3, "N": 20}, {"M": 2, "N": 9}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {}

"""A triton.language dtype passed as a constexpr argument (OUT_DTYPE=tl.float32), as kernels that
choose their output precision take it: one backward per dtype seen, dispatched on it."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _scale_fwd(X, Y, N, OUT_DTYPE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (x * tl.exp(x)).to(OUT_DTYPE), mask=m)


@tad.autodiff(grad_inputs=("x",))
def dtype_constexpr(x, out="float32"):
    M, N = x.shape
    y = torch.empty_like(x)
    _scale_fwd[(M,)](x, y, N, OUT_DTYPE=getattr(tl, out), BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 3, "N": 20, "out": "float32"}, {"M": 2, "N": 7, "out": "float64"}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {"out": dims["out"]}

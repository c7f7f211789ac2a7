"""A stub that reads a tensor's value on the host (`.item()`), which the meta device cannot run:
generate's probe of the second SWEEP entry fails, and the entry is traced as it is, finding the
specialization only it has (SQUARE=True for more than 64 elements)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _square_or_double(X, Y, n, BLOCK: tl.constexpr, SQUARE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0)
    if SQUARE:
        y = x * x
    else:
        y = 2.0 * x
    tl.store(Y + offs, y, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def square_or_double(x):
    n = x.numel()
    y = torch.empty_like(x)
    finite = bool(torch.isfinite(x).all().item())  # a host read: no meta tensor has a value
    _square_or_double[(triton.cdiv(n, 32),)](x, y, n, BLOCK=32, SQUARE=finite and n > 64)
    return y


SWEEP = [{"N": 40}, {"N": 100}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["N"], dtype=dtype, device=device),), {}


def reference(x):
    return x * x if x.numel() > 64 else 2.0 * x

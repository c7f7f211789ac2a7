"""y = leaky_relu(x) with slope 0.1, on inputs of which a tenth lie 5e-7 to 3e-6 from the kink at 0:
the first step of a central difference along a random direction crosses the kink at many elements
and measures it, not the derivative. A step a hundred times smaller does not cross it: the CPU
tier's finite differences must tell the two apart (and still fail a wrong gradient, which no step
fixes)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _leaky(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    tl.store(Y + offs, tl.where(x >= 0.0, x, 0.1 * x), mask=offs < n)


@tad.autodiff(grad_inputs=("x",))
def leaky(x):
    y = torch.empty_like(x)
    _leaky[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y


SWEEP = [{"n": 4000}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    x = torch.randn(dims["n"], dtype=torch.float64)
    near = torch.arange(dims["n"]) % 10 == 0
    x = torch.where(near, 5e-7 * torch.sign(x) * (1 + x.abs()), x)
    return (x.to(dtype).to(dims.get("device", "cuda")),), {}

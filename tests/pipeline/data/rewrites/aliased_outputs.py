"""One output passed as two pointer parameters: the second store (through Out2) overwrites what the
first (through Out1) wrote, so only 3x reaches y. The two parameters' stores are rewrites of one
tensor (passes/rewrites.h): the first one's reverse reads a zeroed cotangent."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _aliased_outputs(X, Out1, Out2, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(X + offs, mask=mask, other=0.0)
    tl.store(Out1 + offs, x * x, mask=mask)
    tl.store(Out2 + offs, 3.0 * x, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def aliased_outputs(x):
    N = x.numel()
    y = torch.empty_like(x)
    _aliased_outputs[(triton.cdiv(N, 16),)](x, y, y, N, BLOCK=16)
    return y


SWEEP = [{"N": 20}, {"N": 37}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn((dims["N"],), dtype=dt, device=dev),), {}


def reference(x):
    return 3.0 * x

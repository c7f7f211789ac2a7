"""The kernel writes one buffer through two parameters that get different views of it, and torch
code sums it: as its own autograd node, such a launch is refused (it must get one view per buffer
it writes)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def square_and_double(X, Y, Z, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, x * x, mask=mask)
    tl.store(Z + offs, 2.0 * x, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def halves_summed(x):
    n = x.numel()
    out = torch.empty(n, dtype=x.dtype, device=x.device)
    square_and_double[(triton.cdiv(n, 64),)](x, out, out.view(1, n), n, BLOCK=64)
    return out.sum()


SWEEP = [{"n": 100}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["n"], dtype=dtype, device=dims.get("device", "cuda")),), {}

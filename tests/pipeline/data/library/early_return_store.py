"""A store on an early-return path (padding rows written with zeros, then `return`) followed by
loads and stores on the other path: the backward replays both under their predicates."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _padded_fwd(X, Y, M_VALID, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    if row >= M_VALID:
        tl.store(Y + row * N + cols, tl.zeros((BLOCK,), tl.float32), mask=m)
        return
    x = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, x * tl.exp(x), mask=m)


@tad.autodiff(grad_inputs=("x",))
def early_return_store(x, valid):
    M, N = x.shape
    y = torch.empty_like(x)
    _padded_fwd[(M,)](x, y, valid, N, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 4, "N": 20, "valid": 3}, {"M": 2, "N": 7, "valid": 2}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device), dims["valid"]), {}

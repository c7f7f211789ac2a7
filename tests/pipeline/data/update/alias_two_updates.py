"""Two in-place params passed the same tensor: Q <- q*k, then K <- q+k (K's store wins): x <- 2x."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _two(Q, K, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    q = tl.load(Q + offs, mask=mask, other=0.0)
    k = tl.load(K + offs, mask=mask, other=0.0)
    tl.store(Q + offs, q * k, mask=mask)
    tl.store(K + offs, q + k, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def two_(x):
    N = x.numel()
    _two[(triton.cdiv(N, 16),)](x, x, N, BLOCK=16)
    return x


SWEEP = [{"N": 37}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["N"], dtype=dtype, device=device),), {}


def reference(x):
    return 2 * x

"""One launch stores a running value to Y in every iteration: the last store wins."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def running(X, Y, n, K: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(K):
        acc = acc + x * x
        tl.store(Y + offs, acc, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def loop_store(x):
    n = x.numel()
    y = torch.empty_like(x)
    running[(triton.cdiv(n, 64),)](x, y, n, K=3, BLOCK=64)
    return y


SWEEP = [{"n": 100}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["n"], dtype=dtype, device=device),), {}


def reference(x):
    return 3 * x * x

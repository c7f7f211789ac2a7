"""y[z, h, :] = x[z, h, :] * sum(x[z, h, :]) on a grid (Z, H): program_id(1) is the head."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _heads_fwd(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0) * tl.num_programs(1) + tl.program_id(1)
    X += row * N
    Y += row * N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(X + offs, mask=offs < N, other=0.0)
    s = tl.sum(acc, axis=0)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < N, other=0.0)
        tl.store(Y + offs, x * s, mask=offs < N)


@tad.autodiff(grad_inputs=("x",))
def heads(x):
    Z, H, N = x.shape
    y = torch.empty_like(x)
    _heads_fwd[(Z, H)](x, y, N, BLOCK=32)
    return y


SWEEP = [{"Z": 3, "H": 1, "N": 600}, {"Z": 3, "H": 2, "N": 600}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["Z"], dims["H"], dims["N"], dtype=dtype, device=device)
    return (x,), {}


def reference(x):
    return x * x.sum(2, keepdim=True)

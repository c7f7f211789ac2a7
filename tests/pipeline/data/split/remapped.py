"""y[a, b, :] = x[a, b, :] * sum(x[a, b, :]), programs column-major over (a, b) through tl.cdiv."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _rm_fwd(X, Y, A, B, N, BA: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_a = tl.cdiv(A, BA)
    pa = pid % tiles_a
    pb = pid // tiles_a
    row = pa * B + pb
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
def rm(x):
    A, B, N = x.shape
    y = torch.empty_like(x)
    _rm_fwd[(A * B,)](x, y, A, B, N, BA=1, BLOCK=32)
    return y


SWEEP = [{"A": 3, "B": 2, "N": 600}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["A"], dims["B"], dims["N"], dtype=dtype, device=device)
    return (x,), {}


def reference(x):
    return x * x.sum(2, keepdim=True)

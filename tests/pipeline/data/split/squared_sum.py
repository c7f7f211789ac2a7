"""y[r, :] = x[r, :] * sum_l(acc_l^2), acc_l = sum_k w[r, k*BLOCK + l] (a blockwise fold of w)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _sq_fwd(X, W, Y, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    X += pid * N
    W += pid * N
    Y += pid * N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(W + offs, mask=offs < N, other=0.0)
    s = tl.sum(acc * acc, axis=0)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < N, other=0.0)
        tl.store(Y + offs, x * s, mask=offs < N)


@tad.autodiff(grad_inputs=("x",))
def sq(x, w):
    M, N = x.shape
    y = torch.empty_like(x)
    _sq_fwd[(M,)](x, w, y, N, BLOCK=32)
    return y


SWEEP = [{"M": 3, "N": 600}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=device)
    w = torch.randn(dims["M"], dims["N"], dtype=dtype, device=device)
    return (x, w), {}


def reference(x, w):
    M, N = x.shape
    B = 32
    pad = (-N) % B
    wp = torch.nn.functional.pad(w, (0, pad)).reshape(M, -1, B).sum(1)
    return x * (wp * wp).sum(1, keepdim=True)

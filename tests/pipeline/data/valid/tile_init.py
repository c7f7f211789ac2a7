"""A loop whose carried running maximum starts as tl.zeros([BLOCK]) - float("inf"): the emitted
backward must keep the initial value a tile, not a scalar the loop would change to a tile."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _running_max_fwd(X, Y, N, T, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    best = tl.zeros([BLOCK], dtype=tl.float32) - float("inf")
    for t in range(T):
        x = tl.load(X + (row * T + t) * N + cols, mask=m, other=0.0)
        best = tl.maximum(best, x * x)
    tl.store(Y + row * N + cols, best, mask=m)


@tad.autodiff(grad_inputs=("x",))
def running_max(x):
    M, T, N = x.shape
    y = torch.empty(M, N, dtype=x.dtype, device=x.device)
    _running_max_fwd[(M,)](x, y, N, T, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 2, "T": 3, "N": 20}, {"M": 3, "T": 5, "N": 7}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["T"], dims["N"], dtype=dtype, device=device),), {}


def reference(x):
    return (x * x).amax(dim=1)

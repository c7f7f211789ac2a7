"""y[m, n] = x[m, n] * w[n] by a persistent kernel: P programs each walk the tiles
tile = pid, pid + P, ... (row-major: pid_m = tile // tiles_n). dw[n] sums over every tile row, so
with the forward's schedule each program adds its tiles' partial sums with atomics. The loop's
iterations are programs of their own (one per tile) where the P programs run each tile once, with
as many programs as the stride and also with more programs than tiles: then dw is summed over the
tile rows in registers."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _persistent_scale(X, W, Y, M, N, P: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    for tile in range(pid, num_tiles, P):
        pid_m = tile // tiles_n
        pid_n = tile % tiles_n
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        m = (rm[:, None] < M) & (rn[None, :] < N)
        x = tl.load(X + rm[:, None] * N + rn[None, :], mask=m, other=0.0)
        w = tl.load(W + rn, mask=rn < N, other=0.0)
        tl.store(Y + rm[:, None] * N + rn[None, :], x * w[None, :], mask=m)


@tad.autodiff(grad_inputs=("x", "w"))
def persistent_scale(x, w, programs=3):
    M, N = x.shape
    y = torch.empty_like(x)
    _persistent_scale[(programs,)](x, w, y, M, N, P=programs, BLOCK_M=4, BLOCK_N=8)
    return y


SWEEP = [{"M": 19, "N": 21, "programs": 3}, {"M": 9, "N": 30, "programs": 40}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=device)
    w = torch.randn(dims["N"], dtype=dtype, device=device)
    return (x, w), {"programs": dims["programs"]}


def reference(x, w, programs=3):
    return x * w[None, :]

"""y[m, n] = x[m, n] * w[n] by a persistent kernel written as Triton's persistent matmul tutorial
writes its epilogue: besides the loop's variable, a second tile counter starts one step behind
(out_tile = start - P) and is advanced at the top of the store's part of the body. Both follow the
loop's variable, so the loop's iterations are still programs of their own, and the counter is the
variable once advanced: its tile is the same tile."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _tile_of(tile, tiles_n):
    return tile // tiles_n, tile % tiles_n


@triton.jit
def _persistent_scale(X, W, Y, M, N, P: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    out_tile = start - P
    for tile in tl.range(start, num_tiles, P, flatten=True):
        pid_m, pid_n = _tile_of(tile, tiles_n)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        m = (rm[:, None] < M) & (rn[None, :] < N)
        x = tl.load(X + rm[:, None] * N + rn[None, :], mask=m, other=0.0)
        w = tl.load(W + rn, mask=rn < N, other=0.0)
        y = x * w[None, :]
        out_tile += P
        om, on = _tile_of(out_tile, tiles_n)
        rm2 = om * BLOCK_M + tl.arange(0, BLOCK_M)
        rn2 = on * BLOCK_N + tl.arange(0, BLOCK_N)
        tl.store(Y + rm2[:, None] * N + rn2[None, :], y, mask=(rm2[:, None] < M) & (rn2[None, :] < N))


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

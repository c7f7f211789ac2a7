"""A persistent kernel whose tiles (row, col) store a row of y from tile col of that row of x: the
tiles of one row overwrite each other, and with one program walking all tiles in order the last
column survives. On its tile coordinates the tiles of a row would be programs racing for it, so the
backward is not re-gridded there: it walks the tiles in reverse and zeroes y's cotangent as it reads
it (passes/rewrites.h), which gives the earlier tiles of a row no gradient."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _persistent_tiles(X, Y, R, NCOL, C, NUM_PROGRAMS: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < C
    for tile in range(tl.program_id(0), R * NCOL, NUM_PROGRAMS):
        row = tile // NCOL
        col = tile % NCOL
        x = tl.load(X + (row * NCOL + col) * C + cols, mask=mask, other=0.0)
        tl.store(Y + row * C + cols, 2.0 * x, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def persistent_tiles(x):
    R, NCOL, C = x.shape
    y = torch.empty((R, C), dtype=x.dtype, device=x.device)
    _persistent_tiles[(1,)](x, y, R, NCOL, C, NUM_PROGRAMS=1, BLOCK=16)
    return y


SWEEP = [{"R": 3, "NCOL": 4, "C": 10}, {"R": 5, "NCOL": 2, "C": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn((dims["R"], dims["NCOL"], dims["C"]), dtype=dt, device=dev),), {}


def reference(x):
    return 2.0 * x[:, -1]

"""A persistent kernel over tiles (row, col) = (tile // NCOL, tile % NCOL) that stores them
column-major, y[col, row, :]: the loop's end R * NCOL bounds row below R, so each program writes each
element once (the quotient's range from the loop's end, affine.h's Division::below); session 21's
analysis, without it, refused the backward at run time."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _colmajor(X, Y, R, NCOL, C, NUM_PROGRAMS: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < C
    for tile in range(tl.program_id(0), R * NCOL, NUM_PROGRAMS):
        row = tile // NCOL
        col = tile % NCOL
        x = tl.load(X + (row * NCOL + col) * C + cols, mask=mask, other=0.0)
        tl.store(Y + (col * R + row) * C + cols, 2.0 * x, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def colmajor(x):
    R, NCOL, C = x.shape
    y = torch.empty((NCOL, R, C), dtype=x.dtype, device=x.device)
    _colmajor[(2,)](x, y, R, NCOL, C, NUM_PROGRAMS=2, BLOCK=16)
    return y


SWEEP = [{"R": 3, "NCOL": 4, "C": 10}, {"R": 5, "NCOL": 2, "C": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn((dims["R"], dims["NCOL"], dims["C"]), dtype=dt, device=dev),), {}


def reference(x):
    return 2.0 * x.transpose(0, 1)

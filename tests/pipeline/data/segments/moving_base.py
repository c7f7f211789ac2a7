"""Each iteration broadcasts one element, X[r, start // BLOCK], its base moving with the loop: every
tile adds to one address at lane offset 0, so a run carried across iterations would merge the sums of
different elements and flush them at a later iteration's base. The runs are left out where a base
is not the same in every iteration (segment_atomics.h)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _spread_fwd(X, Y, n, stride, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    for start in range(0, n * BLOCK, BLOCK):
        lane = tl.arange(0, BLOCK)
        x = tl.load(X + r * stride + start // BLOCK + lane // BLOCK)
        tl.store(Y + r * n * BLOCK + start + lane, x * (lane + 1).to(tl.float32))


@tad.autodiff(grad_inputs=("x",))
def spread(x):
    R, n = x.shape
    y = torch.empty(R, n * 16, dtype=x.dtype, device=x.device)
    _spread_fwd[(R,)](x, y, n, x.stride(0), BLOCK=16)
    return y


SWEEP = [{"R": 3, "n": 5}, {"R": 2, "n": 1}, {"R": 2, "n": 7}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["R"], dims["n"], dtype=dtype, device=device),), {}


def reference(x):
    lanes = torch.arange(1, 17, dtype=x.dtype, device=x.device)
    return (x[:, :, None] * lanes).reshape(x.shape[0], -1)

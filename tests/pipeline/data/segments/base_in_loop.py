"""Each element of a row read twice, at idx // 2, its row's base `r * stride` computed inside the loop
(as written, not hoisted): the backward adds dx by segments and carries runs across iterations, and
the last run, flushed after the loop, needs that base there (a review found it used the loop body's
value after the loop: the module did not run; segment_atomics.h)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _dup_fwd(X, Y, n, stride, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        acc += tl.load(X + r * stride + idx, mask=idx < n, other=0.0)
    s = tl.sum(acc, axis=0)
    for start in range(0, 2 * n, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        x = tl.load(X + r * stride + idx // 2, mask=idx < 2 * n, other=0.0)
        tl.store(Y + r * 2 * n + idx, x * s, mask=idx < 2 * n)


@tad.autodiff(grad_inputs=("x",))
def dup(x):
    R, n = x.shape
    y = torch.empty(R, 2 * n, dtype=x.dtype, device=x.device)
    _dup_fwd[(R,)](x, y, n, x.stride(0), BLOCK=16)
    return y


SWEEP = [{"R": 3, "n": 40}, {"R": 2, "n": 16}, {"R": 2, "n": 33}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["R"], dims["n"], dtype=dtype, device=device),), {}


def reference(x):
    return torch.repeat_interleave(x, 2, dim=1) * x.sum(1, keepdim=True)

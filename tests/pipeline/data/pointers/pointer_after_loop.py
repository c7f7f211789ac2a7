"""A pointer advanced by a loop and loaded from after it: the load reads the row the loop stopped at."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def sum_then_scale(X, Y, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = X + tl.program_id(0) * (STEPS + 1) * BLOCK + offs
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(0, STEPS):
        acc += tl.load(p).to(tl.float32)
        p += BLOCK
    last = tl.load(p).to(tl.float32)
    tl.store(Y + tl.program_id(0) * BLOCK + offs, acc * last)


@tad.autodiff(grad_inputs=["x"])
def sum_then_scale_stub(x):
    rows, steps, block = x.shape[0], x.shape[1] - 1, x.shape[2]
    y = torch.empty(rows, block, device=x.device, dtype=x.dtype)
    sum_then_scale[(rows,)](x, y, BLOCK=block, STEPS=steps)
    return y


def make_args(dims):
    x = torch.randn(dims["rows"], dims["steps"] + 1, 32, dtype=getattr(torch, dims["dtype"]), device=dims["device"])
    return (x,), {}


SWEEP = [{"rows": 2, "steps": 3}, {"rows": 4, "steps": 5}]


def reference(x):
    return x[:, :-1].sum(1) * x[:, -1]

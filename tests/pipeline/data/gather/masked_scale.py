"""y[c, t] = s[c] * (x[c, t] + 0.5 * x[c, t - 1]), time along dim 1, s loaded through a pointer tile
that does not vary with t but a mask that does. The copy of that load must be masked by the
shifted lanes being run along dim 1 (the load's own dim of t), not along its pointer's (none)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _scal2(X, S, Y, T, C, stride, BLOCK: tl.constexpr, BLOCK_C: tl.constexpr):
    ts = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cs = tl.arange(0, BLOCK_C)
    m = (cs[:, None] < C) & (ts[None, :] < T)
    s = tl.load(S + cs[:, None] + tl.zeros([BLOCK_C, BLOCK], dtype=tl.int32), mask=m, other=0.0)
    offs = cs[:, None] * stride + ts[None, :]
    x = tl.load(X + offs, mask=m, other=0.0)
    prev = tl.load(X + offs - 1, mask=m & (ts[None, :] > 0), other=0.0)
    tl.store(Y + offs, s * (x + 0.5 * prev), mask=m)


@tad.autodiff(grad_inputs=("x",))
def scal2(x, s):
    C, T = x.shape
    y = torch.zeros_like(x)
    _scal2[(triton.cdiv(T, 8),)](x, s, y, T, C, x.stride(0), BLOCK=8, BLOCK_C=8)
    return y


SWEEP = [{"T": 16, "C": 8}, {"T": 20, "C": 8}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["C"], dims["T"], dtype=dt, device=dev), torch.randn(dims["C"], dtype=dt, device=dev)), {}


def reference(x, s):
    prev = torch.cat([torch.zeros_like(x[:, :1]), x[:, :-1]], dim=1)
    return s[:, None] * (x + 0.5 * prev)

"""One tl.arange on both dims of a tile: rows index x (one row back too), columns index w, and y
sums over the columns. The shifted copy would read R + 1 on both dims, the address only on one:
the lane owning row t would gather row t + 1's term with column j + 1's weight. Refused ("varies
with the shifted lanes along another dim"); the adds stay."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _twodim(X, W, Y, T, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    t = pid * BLOCK + tl.arange(0, BLOCK)
    m = (t[:, None] < T) & (t[None, :] < T)
    w = tl.load(W + t[None, :], mask=t[None, :] < T, other=0.0)
    x = tl.load(X + t[:, None], mask=m, other=0.0)
    xp = tl.load(X + t[:, None] - 1, mask=m & (t[:, None] >= 1), other=0.0)
    y = tl.sum((x + 0.5 * xp) * w, axis=1)
    tl.store(Y + t, y, mask=t < T)


@tad.autodiff(grad_inputs=("x",))
def twodim(x, w):
    T = x.shape[0]
    y = torch.zeros_like(x)
    _twodim[(triton.cdiv(T, 8),)](x, w, y, T, BLOCK=8)
    return y


SWEEP = [{"T": 20}, {"T": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["T"], dtype=dt, device=dev), torch.randn(dims["T"], dtype=dt, device=dev)), {}


def reference(x, w):
    T = x.shape[0]
    prev = torch.cat([torch.zeros_like(x[:1]), x[:-1]])
    s = torch.zeros_like(x)
    for b in range(0, T, 8):
        s[b:b + 8] = w[b:b + 8].sum()
    return (x + 0.5 * prev) * s

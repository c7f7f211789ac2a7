"""y[t] = x[t] + 0.5 * x[t - 1] (x[-1] = 0) over the first n of T rows of x [T, C]: the grid runs
n / BLOCK_T programs, while the masks bound rows by T.

The backward adds dy[t] at x[t] and 0.5 * dy[t] at x[t - 1]; gathered, the lane owning row t adds
the second term of lane t + 1, which for the last row run (t = n - 1) no program computed: its
copy must count for nothing although its mask (t + 1 < T) holds."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _prefix_shift(X, Y, T, C, stride, BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    ts = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_C)
    mask = (ts[:, None] < T) & (cols[None, :] < C)
    offs = ts[:, None] * stride + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=0.0)
    prev = tl.load(X + offs - stride, mask=mask & (ts[:, None] > 0), other=0.0)
    tl.store(Y + offs, x + 0.5 * prev, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def prefix_shift(x, n):
    T, C = x.shape
    y = torch.zeros_like(x)
    block_t = 16
    _prefix_shift[(n // block_t,)](x, y, T, C, x.stride(0), BLOCK_T=block_t,
                                   BLOCK_C=triton.next_power_of_2(C))
    return y


SWEEP = [{"T": 40, "C": 5, "n": 32}, {"T": 48, "C": 3, "n": 48}, {"T": 20, "C": 8, "n": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["T"], dims["C"], dtype=dt, device=dev),), {"n": dims["n"]}


def reference(x, n):
    y = torch.zeros_like(x)
    prev = torch.cat([torch.zeros_like(x[:1]), x[:-1]])
    y[:n] = x[:n] + 0.5 * prev[:n]
    return y

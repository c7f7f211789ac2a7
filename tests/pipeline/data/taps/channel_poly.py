"""A per-channel polynomial, y[r, c] = sum_{j < W} w[c, j] x[r, c]^(j + 1), its W terms unrolled
with tl.static_range: each tap adds its share of the weight gradient at w + c * stride_wc + j in
every row's program, so the re-grid sums one accumulator per tap and flushes all of them into one
partial row. `pad` leaves unused columns past the taps (stride_wc = W + pad): the taps' flushes
then miss part of each row, which must be zero-filled."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _channel_poly(X, Wt, Y, C, stride_x, stride_wc, WIDTH: tl.constexpr, BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    chans = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    ok = chans < C
    x = tl.load(X + row * stride_x + chans, mask=ok, other=0.0)
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    p = x
    for j in tl.static_range(WIDTH):
        w = tl.load(Wt + chans * stride_wc + j, mask=ok, other=0.0)
        acc += w * p
        p = p * x
    tl.store(Y + row * stride_x + chans, acc, mask=ok)


@tad.autodiff(grad_inputs=("x", "weight"))
def channel_poly(x, weight):
    R, C = x.shape
    y = torch.empty_like(x)
    block_c = 16
    _channel_poly[(R, triton.cdiv(C, block_c))](x, weight, y, C, x.stride(0), weight.stride(0),
                                                WIDTH=weight.shape[1], BLOCK_C=block_c)
    return y


DTYPES = [torch.float32]
SWEEP = [{"R": 9, "C": 37, "W": 3, "pad": 0}, {"R": 7, "C": 20, "W": 4, "pad": 2}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    R, C, W, pad = dims["R"], dims["C"], dims["W"], dims["pad"]
    weight = torch.randn(C, W + pad, dtype=dt, device=dev)[:, :W]
    return (0.5 * torch.randn(R, C, dtype=dt, device=dev), weight), {}


def reference(x, weight):
    powers = torch.stack([x ** (j + 1) for j in range(weight.shape[1])], dim=-1)
    return (powers * weight).sum(-1)

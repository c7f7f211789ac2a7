"""Causal depthwise 1-D convolution with an optional SiLU, as in Mamba's short convolution:
y[b, c, t] = act(bias[c] + sum_{j < W} w[c, j] x[b, c, t - (W - 1) + j]), x zero before t = 0.
x [B, C, L], w [C, W] with W a constexpr (2 to 4), bias [C].

A 3-D grid: time blocks, channel blocks, batch. The taps are unrolled with tl.static_range, so x
is read W times at W shifts: its gradient gathers from W positions of the output gradient.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _causal_conv1d_fwd(X, Wt, Bias, Y, C, L, stride_xb, stride_xc, stride_wc, stride_yb,
                       stride_yc, WIDTH: tl.constexpr, ACTIVATION: tl.constexpr,
                       BLOCK_C: tl.constexpr, BLOCK_L: tl.constexpr):
    t = tl.program_id(0) * BLOCK_L + tl.arange(0, BLOCK_L)
    chans = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    b = tl.program_id(2)
    chan_ok = chans < C
    acc = tl.zeros([BLOCK_C, BLOCK_L], dtype=tl.float32)
    acc += tl.load(Bias + chans, mask=chan_ok, other=0.0).to(tl.float32)[:, None]
    for j in tl.static_range(WIDTH):
        src = t - (WIDTH - 1) + j
        mask = chan_ok[:, None] & (src[None, :] >= 0) & (src[None, :] < L)
        x = tl.load(X + b * stride_xb + chans[:, None] * stride_xc + src[None, :], mask=mask,
                    other=0.0)
        w = tl.load(Wt + chans * stride_wc + j, mask=chan_ok, other=0.0).to(tl.float32)
        acc += w[:, None] * x.to(tl.float32)
    if ACTIVATION == "silu":
        acc = acc * tl.sigmoid(acc)
    mask = chan_ok[:, None] & (t[None, :] < L)
    tl.store(Y + b * stride_yb + chans[:, None] * stride_yc + t[None, :], acc.to(Y.dtype.element_ty),
             mask=mask)


@tad.autodiff(grad_inputs=("x", "weight", "bias"))
def causal_conv1d(x, weight, bias, activation="silu"):
    B, C, L = x.shape
    width = weight.shape[1]
    y = torch.empty_like(x)
    block_c, block_l = 16, 64
    grid = (triton.cdiv(L, block_l), triton.cdiv(C, block_c), B)
    _causal_conv1d_fwd[grid](x, weight, bias, y, C, L, x.stride(0), x.stride(1), weight.stride(0),
                             y.stride(0), y.stride(1), WIDTH=width, ACTIVATION=activation,
                             BLOCK_C=block_c, BLOCK_L=block_l)
    return y


SWEEP = [
    {"B": 2, "C": 20, "L": 70, "W": 4, "activation": "silu"},
    {"B": 1, "C": 9, "L": 130, "W": 3, "activation": "none"},
    {"B": 4, "C": 1024, "L": 4096, "W": 4, "activation": "silu"},
    {"B": 4, "C": 1024, "L": 4096, "W": 4, "activation": "none"},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    B, C, L, W = dims["B"], dims["C"], dims["L"], dims["W"]
    x = torch.randn(B, C, L, dtype=dtype, device=device)
    weight = torch.randn(C, W, dtype=dtype, device=device) / W ** 0.5
    bias = 0.1 * torch.randn(C, dtype=dtype, device=device)
    return (x, weight, bias), {"activation": dims.get("activation", "silu")}


def reference(x, weight, bias, activation="silu"):
    C, W = weight.shape
    y = torch.nn.functional.conv1d(x, weight[:, None, :], bias, padding=W - 1, groups=C)
    y = y[..., : x.shape[-1]]
    return torch.nn.functional.silu(y) if activation == "silu" else y


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["B"] * dims["C"] * dims["L"]
    # fwd: x in, y out; bwd: x, dy in, dx out (the taps and bias are small).
    return n * item * (2 if mode == "fwd" else 3)

"""A diagonal RNN, h_t = tanh(w * h_{t-1} + x_t) from h_{-1} = h0, over x [B, T, C]: every state is
stored at Hs[b, t], so the backward reads the state each step started from back from the step
before (passes/stored_states.h) instead of running the recurrence again."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _rnn_tanh(X, W, H0, Hs, T, C, stride_b, stride_t, BLOCK_C: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = cols < C
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    h = tl.load(H0 + b * C + cols, mask=mask, other=0.0).to(tl.float32)
    for t in range(T):
        offs = b * stride_b + t * stride_t + cols
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        h = _tanh(w * h + x)
        tl.store(Hs + offs, h, mask=mask)


@triton.jit
def _tanh(z):
    return 2.0 * tl.sigmoid(2.0 * z) - 1.0


@tad.autodiff(grad_inputs=("x", "w", "h0"))
def rnn_tanh(x, w, h0):
    B, T, C = x.shape
    hs = torch.empty_like(x)
    _rnn_tanh[(B, triton.cdiv(C, 16))](x, w, h0, hs, T, C, x.stride(0), x.stride(1), BLOCK_C=16)
    return hs


SWEEP = [{"B": 2, "T": 7, "C": 20}, {"B": 3, "T": 12, "C": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    B, T, C = dims["B"], dims["T"], dims["C"]
    return (torch.randn(B, T, C, dtype=dt, device=dev), 0.9 * torch.rand(C, dtype=dt, device=dev),
            torch.randn(B, C, dtype=dt, device=dev)), {}


def reference(x, w, h0):
    h, hs = h0, []
    for t in range(x.shape[1]):
        h = torch.tanh(w * h + x[:, t])
        hs.append(h)
    return torch.stack(hs, dim=1)

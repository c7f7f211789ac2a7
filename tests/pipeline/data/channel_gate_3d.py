"""A per-channel gate on a [B, T, C] tensor, y = x * sigmoid(x * s[c]), on a 3-D grid (token
blocks, channel blocks, batch): the gate's gradient is a sum over token blocks and batch (axes 0
and 2), each channel block's programs adding into their own channels (axis 1 keeps its programs)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _channel_gate(X, S, Y, T, C, stride_b, stride_t, BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    ts = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    base = tl.program_id(2) * stride_b
    col_ok = cols < C
    mask = (ts[:, None] < T) & col_ok[None, :]
    offs = base + ts[:, None] * stride_t + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=0.0)
    s = tl.load(S + cols, mask=col_ok, other=0.0)
    tl.store(Y + offs, x / (1.0 + tl.exp(-x * s[None, :])), mask=mask)


@tad.autodiff(grad_inputs=("x", "s"))
def channel_gate(x, s):
    B, T, C = x.shape
    y = torch.empty_like(x)
    grid = (triton.cdiv(T, 4), triton.cdiv(C, 8), B)
    _channel_gate[grid](x, s, y, T, C, x.stride(0), x.stride(1), BLOCK_T=4, BLOCK_C=8)
    return y


# tl.exp takes float32 and float64 only: the forward itself does not compile for float16.
DTYPES = [torch.float32]
SWEEP = [{"B": 2, "T": 13, "C": 19}, {"B": 3, "T": 9, "C": 8}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    B, T, C = dims["B"], dims["T"], dims["C"]
    return (torch.randn(B, T, C, dtype=dt, device=dev), torch.randn(C, dtype=dt, device=dev)), {}


def reference(x, s):
    return x * torch.sigmoid(x * s)

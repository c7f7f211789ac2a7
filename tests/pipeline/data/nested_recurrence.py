"""A diagonal RNN, h_t = tanh(a * h_{t-1} + x_t @ U) from an initial state h_{-1} = h0: the outer
loop over time carries the nonlinear state h; the input projection x_t @ U runs in an inner loop over
chunks of K. x is [B, T, K], U is [K, C], a is [C], h0 is [B, C] and h is [B, T, C]; each program
owns BLOCK_C channels of one batch element. Reverse mode meets a nonlinear outer loop (recompute or
tape) with an accumulator loop inside; recomputing reruns the outer loop from the loaded h0 in every
reverse iteration."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

import tad


@triton.jit
def _rnn_fwd(X, U, A, H0, H, T, K, C, stride_xb, stride_xt, stride_hb, stride_ht, BLOCK_K: tl.constexpr,
             BLOCK_C: tl.constexpr):
    pid_b = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < C
    a = tl.load(A + cols, mask=cmask, other=0.0).to(tl.float32)
    # The state is float32 whatever the inputs' dtype: a loop keeps the type it carries.
    h = tl.load(H0 + pid_b * C + cols, mask=cmask, other=0.0).to(tl.float32)
    for t in range(0, T):
        z = tl.zeros((BLOCK_C,), tl.float32)
        for k0 in range(0, K, BLOCK_K):
            ks = k0 + tl.arange(0, BLOCK_K)
            kmask = ks < K
            xk = tl.load(X + pid_b * stride_xb + t * stride_xt + ks, mask=kmask, other=0.0).to(tl.float32)
            u = tl.load(U + ks[:, None] * C + cols[None, :], mask=kmask[:, None] & cmask[None, :], other=0.0).to(tl.float32)
            z += tl.sum(xk[:, None] * u, axis=0)
        h = libdevice.tanh(a * h + z)
        tl.store(H + pid_b * stride_hb + t * stride_ht + cols, h.to(H.dtype.element_ty), mask=cmask)


@tad.autodiff(grad_inputs=("x", "u", "a", "h0"))
def rnn(x, u, a, h0):
    B, T, K = x.shape
    C = u.shape[1]
    h = torch.empty(B, T, C, dtype=x.dtype, device=x.device)
    block_c = 16
    grid = (B, triton.cdiv(C, block_c))
    _rnn_fwd[grid](x, u, a, h0, h, T, K, C, x.stride(0), x.stride(1), h.stride(0), h.stride(1), BLOCK_K=8,
                   BLOCK_C=block_c)
    return h


SWEEP = [{"B": 2, "T": 5, "K": 20, "C": 24}, {"B": 1, "T": 4, "K": 8, "C": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    B, T, K, C = dims["B"], dims["T"], dims["K"], dims["C"]
    x = torch.randn(B, T, K, dtype=dt, device=dev)
    u = torch.randn(K, C, dtype=dt, device=dev) / K ** 0.5
    a = 0.5 + 0.4 * torch.rand(C, dtype=dt, device=dev)
    h0 = torch.randn(B, C, dtype=dt, device=dev)
    return (x, u, a, h0), {}


def reference(x, u, a, h0):
    h = h0
    hs = []
    for t in range(x.shape[1]):
        h = torch.tanh(a * h + x[:, t] @ u)
        hs.append(h)
    return torch.stack(hs, dim=1)

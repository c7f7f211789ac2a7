"""FiLM conditioning, a per-(sample, channel) scale and shift: y[b, c, l] = x[b, c, l] * (1 +
gamma[b, c]) + beta[b, c] for x [B, C, L] and gamma, beta [B, C] from a conditioning network.

A 3-D grid: length blocks on axis 0, channel blocks on axis 1, samples on axis 2; each program
handles a [BLOCK_C, BLOCK_L] tile, so gamma and beta's gradients sum over the programs of axis 0.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _film_fwd(X, Gamma, Beta, Y, C, L, stride_xb, stride_xc, stride_gb, stride_yb, stride_yc,
              BLOCK_C: tl.constexpr, BLOCK_L: tl.constexpr):
    pid_l = tl.program_id(0)
    pid_c = tl.program_id(1)
    b = tl.program_id(2)
    chans = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    pos = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    chan_ok = chans < C
    mask = chan_ok[:, None] & (pos[None, :] < L)
    x = tl.load(X + b * stride_xb + chans[:, None] * stride_xc + pos[None, :], mask=mask, other=0.0)
    gamma = tl.load(Gamma + b * stride_gb + chans, mask=chan_ok, other=0.0).to(tl.float32)
    beta = tl.load(Beta + b * stride_gb + chans, mask=chan_ok, other=0.0).to(tl.float32)
    y = x.to(tl.float32) * (1.0 + gamma[:, None]) + beta[:, None]
    tl.store(Y + b * stride_yb + chans[:, None] * stride_yc + pos[None, :],
             y.to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x", "gamma", "beta"))
def film(x, gamma, beta):
    B, C, L = x.shape
    y = torch.empty_like(x)
    block_c, block_l = 16, 64
    grid = (triton.cdiv(L, block_l), triton.cdiv(C, block_c), B)
    # gamma and beta are both [B, C] contiguous: one row stride serves both.
    _film_fwd[grid](x, gamma, beta, y, C, L, x.stride(0), x.stride(1), gamma.stride(0),
                    y.stride(0), y.stride(1), BLOCK_C=block_c, BLOCK_L=block_l)
    return y


SWEEP = [
    {"B": 2, "C": 20, "L": 70},
    {"B": 3, "C": 7, "L": 200},
    {"B": 32, "C": 256, "L": 4096},
    {"B": 8, "C": 1024, "L": 16384},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    B, C, L = dims["B"], dims["C"], dims["L"]
    x = torch.randn(B, C, L, dtype=dtype, device=device)
    gamma = 0.2 * torch.randn(B, C, dtype=dtype, device=device)
    beta = 0.2 * torch.randn(B, C, dtype=dtype, device=device)
    return (x, gamma, beta), {}


def reference(x, gamma, beta):
    return x * (1.0 + gamma[:, :, None]) + beta[:, :, None]


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["B"] * dims["C"] * dims["L"]
    # fwd: x in, y out; bwd: x, dy in, dx out (gamma and beta are small).
    return n * item * (2 if mode == "fwd" else 3)

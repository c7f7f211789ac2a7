"""LayerScale residual branch (CaiT, DINOv2): out = residual + gamma * x for x, residual [B, L, C]
and a learned per-channel gamma [C]. Programs own BLOCK_R rows of the flattened [B * L, C] view and
walk C in BLOCK_C columns, loading each gamma tile once per column block."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _layer_scale_fwd(X, Res, Gamma, Out, R, C, stride_x, stride_res, stride_out,
                     BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < R
    for c0 in range(0, C, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        col_ok = cols < C
        mask = row_ok[:, None] & col_ok[None, :]
        g = tl.load(Gamma + cols, mask=col_ok, other=0.0).to(tl.float32)
        x = tl.load(X + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0)
        r = tl.load(Res + rows[:, None] * stride_res + cols[None, :], mask=mask, other=0.0)
        out = r.to(tl.float32) + g[None, :] * x.to(tl.float32)
        tl.store(Out + rows[:, None] * stride_out + cols[None, :], out.to(Out.dtype.element_ty),
                 mask=mask)


@tad.autodiff(grad_inputs=("x", "residual", "gamma"))
def layer_scale(x, residual, gamma):
    B, L, C = x.shape
    x2 = x.reshape(B * L, C)
    r2 = residual.reshape(B * L, C)
    out = torch.empty(B * L, C, dtype=x.dtype, device=x.device)
    block_r = 8
    _layer_scale_fwd[(triton.cdiv(B * L, block_r),)](x2, r2, gamma, out, B * L, C, x2.stride(0),
                                                      r2.stride(0), out.stride(0),
                                                      BLOCK_R=block_r, BLOCK_C=128)
    return out.view(B, L, C)


SWEEP = [
    {"B": 2, "L": 13, "C": 200},
    {"B": 3, "L": 7, "C": 96},
    {"B": 16, "L": 1024, "C": 1024},
    {"B": 32, "L": 4096, "C": 1024, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    B, L, C = dims["B"], dims["L"], dims["C"]
    x = torch.randn(B, L, C, dtype=dtype, device=device)
    residual = torch.randn(B, L, C, dtype=dtype, device=device)
    gamma = 0.1 + 0.05 * torch.randn(C, dtype=dtype, device=device)
    return (x, residual, gamma), {}


def reference(x, residual, gamma):
    return residual + gamma * x


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["B"] * dims["L"] * dims["C"]
    # fwd: x, residual in, out out; bwd: x, dout in, dx, dresidual out.
    return n * item * (3 if mode == "fwd" else 4)

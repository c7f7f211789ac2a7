"""Fused bias + dropout + residual add with a given keep mask: out = residual + (x + bias) * keep
/ (1 - p), for x, residual [M, N], bias [N] and a bool keep mask [M, N] drawn by the caller (so a
backward or a recomputation sees the same mask). Flat 1-D grid over the M * N elements."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _bias_dropout_add_fwd(X, Bias, Keep, Res, Out, n, N, scale, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(Bias + offs % N, mask=mask, other=0.0).to(tl.float32)
    keep = tl.load(Keep + offs, mask=mask, other=0) != 0
    r = tl.load(Res + offs, mask=mask, other=0.0).to(tl.float32)
    out = r + tl.where(keep, (x + b) * scale, 0.0)
    tl.store(Out + offs, out.to(Out.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x", "bias", "residual"))
def bias_dropout_add(x, bias, keep, residual, p=0.1):
    M, N = x.shape
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    # x, keep, residual and out are contiguous, so one flat offset serves all four.
    _bias_dropout_add_fwd[grid](x, bias, keep, residual, out, n, N, 1.0 / (1.0 - p),
                                BLOCK_SIZE=1024)
    return out


SWEEP = [
    {"M": 7, "N": 300, "p": 0.1},
    {"M": 30, "N": 130, "p": 0.5},
    {"M": 8192, "N": 4096, "p": 0.1},
    {"M": 16384, "N": 8192, "p": 0.1, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N, p = dims["M"], dims["N"], dims.get("p", 0.1)
    x = torch.randn(M, N, dtype=dtype, device=device)
    bias = 0.1 * torch.randn(N, dtype=dtype, device=device)
    keep = torch.rand(M, N, device=device) >= p
    residual = torch.randn(M, N, dtype=dtype, device=device)
    return (x, bias, keep, residual), {"p": p}


def reference(x, bias, keep, residual, p=0.1):
    return residual + (x + bias) * keep / (1.0 - p)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["M"] * dims["N"]
    # fwd: x, keep, residual in, out out; bwd: dout, keep in, dx, dresidual out.
    return n * (3 * item + 1) if mode == "fwd" else n * (3 * item + 1)

"""y = softplus(x + bias) for x [M, N] and bias [N], in 2-D tiles.

Every row tile re-reads the same bias slice, so the bias gradient is a sum over rows.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _softplus(z):
    # max(z, 0) + log(1 + exp(-|z|)) never overflows, whatever the sign of z.
    return tl.maximum(z, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(z)))


@triton.jit
def _bias_softplus_fwd(X, Bias, Y, M, N, stride_xm, stride_ym, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(X + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0)
    bias = tl.load(Bias + cols, mask=cols < N, other=0.0)
    z = x.to(tl.float32) + bias.to(tl.float32)[None, :]
    tl.store(Y + rows[:, None] * stride_ym + cols[None, :], _softplus(z), mask=mask)


@tad.autodiff(grad_inputs=("x", "bias"))
def bias_softplus(x, bias):
    M, N = x.shape
    y = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    _bias_softplus_fwd[grid](x, bias, y, M, N, x.stride(0), y.stride(0), BLOCK_M=16, BLOCK_N=256)
    return y


SWEEP = [
    {"M": 7, "N": 300},
    {"M": 30, "N": 700},
    {"M": 8192, "N": 4096},
    {"M": 16384, "N": 16384, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = 2.0 * torch.randn(dims["M"], dims["N"], dtype=dtype, device=device)
    bias = torch.randn(dims["N"], dtype=dtype, device=device)
    return (x, bias), {}


def reference(x, bias):
    return torch.nn.functional.softplus(x + bias)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    M, N = dims["M"], dims["N"]
    return (2 * M * N + N) * item if mode == "fwd" else (3 * M * N + 2 * N) * item

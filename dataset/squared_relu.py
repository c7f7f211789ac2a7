"""Bias plus squared ReLU (Primer's feed-forward activation): y = relu(x + bias)^2 for x [M, N]
and bias [N], on a 2-D grid of [BLOCK_M, BLOCK_N] tiles; bias's gradient sums over every row."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _bias_squared_relu_fwd(X, Bias, Y, M, N, stride_xm, stride_ym, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(X + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0)
    b = tl.load(Bias + cols, mask=cols < N, other=0.0)
    z = tl.maximum(x.to(tl.float32) + b.to(tl.float32)[None, :], 0.0)
    tl.store(Y + rows[:, None] * stride_ym + cols[None, :], (z * z).to(Y.dtype.element_ty),
             mask=mask)


@tad.autodiff(grad_inputs=("x", "bias"))
def bias_squared_relu(x, bias):
    M, N = x.shape
    y = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    _bias_squared_relu_fwd[grid](x, bias, y, M, N, x.stride(0), y.stride(0), BLOCK_M=16,
                                 BLOCK_N=128)
    return y


SWEEP = [
    {"M": 20, "N": 100},
    {"M": 33, "N": 300},
    {"M": 8192, "N": 8192},
    {"M": 16384, "N": 14336, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N = dims["M"], dims["N"]
    x = torch.randn(M, N, dtype=dtype, device=device)
    bias = 0.1 * torch.randn(N, dtype=dtype, device=device)
    return (x, bias), {}


def reference(x, bias):
    return torch.relu(x + bias).square()


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    M, N = dims["M"], dims["N"]
    # fwd: x in, y out; bwd: x, dy in, dx out (plus the bias and its gradient).
    return (2 * M * N + N) * item if mode == "fwd" else (3 * M * N + 2 * N) * item

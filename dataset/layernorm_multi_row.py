"""LayerNorm for narrow rows (N up to a few hundred, e.g. per-head or vision-token norms): each
program normalises a [BLOCK_M, BLOCK_N] tile of BLOCK_M whole rows, reducing along axis 1, and
saves every row's mean and 1/std."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _layernorm_rows_fwd(X, W, B, Y, Mean, Rstd, M, N, stride_x, stride_y, eps,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N
    mask = row_ok[:, None] & col_ok[None, :]
    x = tl.load(X + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=1) / N
    xc = tl.where(mask, x - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=1) / N + eps)
    tl.store(Mean + rows, mean, mask=row_ok)
    tl.store(Rstd + rows, rstd, mask=row_ok)
    w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=col_ok, other=0.0).to(tl.float32)
    y = xc * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(Y + rows[:, None] * stride_y + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x", "weight", "bias"))
def layernorm_multi_row(x, weight, bias, eps=1e-5):
    M, N = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(M, dtype=torch.float32, device=x.device)
    rstd = torch.empty(M, dtype=torch.float32, device=x.device)
    block_n = triton.next_power_of_2(N)
    block_m = max(1, min(32, 4096 // block_n))
    _layernorm_rows_fwd[(triton.cdiv(M, block_m),)](x, weight, bias, y, mean, rstd, M, N,
                                                    x.stride(0), y.stride(0), eps,
                                                    BLOCK_M=block_m, BLOCK_N=block_n)
    return y


SWEEP = [
    {"M": 70, "N": 24},
    {"M": 21, "N": 200},
    {"M": 262144, "N": 64},
    {"M": 65536, "N": 384},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N = dims["M"], dims["N"]
    x = torch.randn(M, N, dtype=dtype, device=device)
    weight = 1.0 + 0.1 * torch.randn(N, dtype=dtype, device=device)
    bias = 0.1 * torch.randn(N, dtype=dtype, device=device)
    return (x, weight, bias), {"eps": 1e-5}


def reference(x, weight, bias, eps=1e-5):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    M, N = dims["M"], dims["N"]
    # fwd: x in, y out; bwd: x, dy in, dx out, plus the weight vectors and their gradients.
    return (2 * M * N + 2 * N) * item if mode == "fwd" else (3 * M * N + 4 * N) * item

"""LayerNorm whose row statistics come from one tl.reduce with Welford's combine function (mean,
sum of squared deviations, count), as numerically careful norm kernels compute them in one pass.

tad has no derivative rule for a reduction with a custom combine function, so TAD_DIFFERENTIATE_AS
gives the statistics helper a differentiable definition with the same parameters and values (the
two-pass mean and sum of squared deviations); the forward still runs the Welford reduction.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    # Empty partials (masked-off lanes) have n = 0: weight them by 0 without dividing by it.
    w_b = tl.where(n > 0.0, n_b / tl.where(n > 0.0, n, 1.0), 0.0)
    delta = mean_b - mean_a
    return mean_a + delta * w_b, m2_a + m2_b + delta * delta * n_a * w_b, n


@triton.jit
def _row_stats(x, mask):
    count = mask.to(tl.float32)
    mean, m2, n = tl.reduce((tl.where(mask, x, 0.0), tl.zeros_like(x), count), 0, _welford_combine)
    return mean, m2 / n


@triton.jit
def _row_stats_definition(x, mask):
    n = tl.sum(mask.to(tl.float32), axis=0)
    mean = tl.sum(tl.where(mask, x, 0.0), axis=0) / n
    xc = tl.where(mask, x - mean, 0.0)
    return mean, tl.sum(xc * xc, axis=0) / n


TAD_DIFFERENTIATE_AS = {_row_stats: _row_stats_definition}


@triton.jit
def _welford_layernorm_fwd(X, W, B, Y, stride_x, stride_y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean, var = _row_stats(x, mask)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    y = (x - mean) * tl.rsqrt(var + eps) * w + b
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x", "weight", "bias"))
def welford_layernorm(x, weight, bias, eps=1e-5):
    M, N = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(N)
    _welford_layernorm_fwd[(M,)](x, weight, bias, y, x.stride(0), y.stride(0), N, eps,
                                 BLOCK_N=block, num_warps=min(max(block // 256, 1), 8))
    return y


SWEEP = [
    {"M": 5, "N": 40},
    {"M": 9, "N": 700},
    {"M": 4096, "N": 4096},
    {"M": 16384, "N": 1024},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N = dims["M"], dims["N"]
    # An offset mean, where E[x^2] - E[x]^2 would lose digits and Welford's update does not.
    x = 3.0 + torch.randn(M, N, dtype=dtype, device=device)
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

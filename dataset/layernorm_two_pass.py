"""LayerNorm in two launches: a statistics kernel writes each row's mean and 1/std into buffers the
stub allocates, then a second kernel normalizes with them. The gradient of x flows through both
launches (directly, and through the statistics)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def row_stats_kernel(X, Mean, Rstd, stride_x, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    centered = tl.where(mask, x - mean, 0.0)
    var = tl.sum(centered * centered, axis=0) / N
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, 1.0 / tl.sqrt(var + eps))


@triton.jit
def normalize_kernel(X, W, B, Mean, Rstd, Y, stride_x, stride_y, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    y = (x - mean) * rstd * w + b
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x", "weight", "bias"))
def layernorm_two_pass(x, weight, bias, eps=1e-5):
    M, N = x.shape
    mean = torch.empty(M, dtype=torch.float32, device=x.device)
    rstd = torch.empty(M, dtype=torch.float32, device=x.device)
    y = torch.empty_like(x)
    block = triton.next_power_of_2(N)
    num_warps = min(max(block // 256, 1), 8)
    row_stats_kernel[(M,)](x, mean, rstd, x.stride(0), N, eps, BLOCK_N=block, num_warps=num_warps)
    normalize_kernel[(M,)](x, weight, bias, mean, rstd, y, x.stride(0), y.stride(0), N,
                           BLOCK_N=block, num_warps=num_warps)
    return y


SWEEP = [
    {"M": 3, "N": 40},
    {"M": 17, "N": 1000},
    {"M": 4096, "N": 1024},
    {"M": 4096, "N": 4096},
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
    # fwd reads x twice, w and b, writes y; bwd reads x twice and dy, writes dx, dw and db.
    return (3 * M * N + 2 * N) * item if mode == "fwd" else (4 * M * N + 4 * N) * item

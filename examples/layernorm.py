"""LayerNorm over the last dim: one program per row; saves mean and rstd for a backward."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _layernorm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    b = tl.load(B + cols, mask=mask).to(tl.float32)
    y = xc * rstd * w + b
    tl.store(Y + cols, y, mask=mask)


@tad.autodiff(grad_inputs=("x", "weight", "bias"))
def layernorm(x, weight, bias, eps=1e-5):
    M, N = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(M, dtype=torch.float32, device=x.device)
    rstd = torch.empty(M, dtype=torch.float32, device=x.device)
    block = triton.next_power_of_2(N)
    num_warps = min(max(block // 256, 1), 8)
    _layernorm_fwd[(M,)](x, y, weight, bias, mean, rstd, x.stride(0), N, eps,
                         BLOCK_SIZE=block, num_warps=num_warps)
    return y


SWEEP = [
    {"M": 4, "N": 48},
    {"M": 37, "N": 1000},
    {"M": 4096, "N": 1024},
    {"M": 4096, "N": 4096},
    {"M": 8192, "N": 8192, "required": False},
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
    return (2 * M * N + 2 * N) * item if mode == "fwd" else (3 * M * N + 4 * N) * item

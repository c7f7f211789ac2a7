"""LayerNorm written the way the Triton tutorial's forward is, for the bench suite: one program per
row, three loops over column blocks (mean, variance, output), Mean and Rstd stored, the block
next_power_of_2(N) up to 64 KB so that the loops run once for rows that fit. tad's variant for that
case (passes/run_once.h) sums dW and dB over a re-grid; bench/refs/layernorm.py (a persistent
hand-written backward) is the reference it is timed against."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _ln_tutorial(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    part = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        part += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(part, axis=0) / N
    part = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        d = tl.where(cols < N, tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32) - mean, 0.0)
        part += d * d
    rstd = 1 / tl.sqrt(tl.sum(part, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        inside = cols < N
        x = tl.load(X + cols, mask=inside, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * tl.load(W + cols, mask=inside).to(tl.float32) + tl.load(B + cols, mask=inside).to(tl.float32)
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=inside)


@tad.autodiff(grad_inputs=("x", "weight", "bias"))
def layernorm(x, weight, bias, eps=1e-5):
    M, N = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(M, dtype=torch.float32, device=x.device)
    rstd = torch.empty(M, dtype=torch.float32, device=x.device)
    block = min(65536 // x.element_size(), triton.next_power_of_2(N))
    num_warps = min(max(block // 256, 1), 8)
    _ln_tutorial[(M,)](x, y, weight, bias, mean, rstd, x.stride(0), N, eps, BLOCK=block, num_warps=num_warps)
    return y


SWEEP = [{"M": 4096, "N": 1024}, {"M": 4096, "N": 4096}, {"M": 4096, "N": 8192}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float16"))
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

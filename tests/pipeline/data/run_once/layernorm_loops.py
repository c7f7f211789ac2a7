"""LayerNorm over rows walked in column blocks, three loops (mean, variance, normalize), the way the
Triton tutorial writes it: the block is next_power_of_2(N) up to 64 KB, so the loops run once for
rows that fit. The backward's variant for that case (passes/run_once.h) sums dW and dB in registers
over a re-grid; a row past the cap (N = 9000 in float64: blocks of 8192) runs the loops twice, and
the other variants apply. bench/run_suite.sh times it beside bench/refs/layernorm.py."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _ln_loops(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
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
def layer_norm(x, weight, bias, eps=1e-5):
    M, N = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(M, dtype=torch.float32, device=x.device)
    rstd = torch.empty(M, dtype=torch.float32, device=x.device)
    block = min(65536 // x.element_size(), triton.next_power_of_2(N))
    num_warps = min(max(block // 256, 1), 8)
    _ln_loops[(M,)](x, y, weight, bias, mean, rstd, x.stride(0), N, eps, BLOCK=block, num_warps=num_warps)
    return y


DTYPES = [torch.float32]
SWEEP = [{"M": 5, "N": 40}, {"M": 17, "N": 300}, {"M": 3, "N": 9000}]


def make_args(dims):
    dt = getattr(torch, dims.get("dtype", "float32"))
    dev = dims.get("device", "cuda")
    M, N = dims["M"], dims["N"]
    x = torch.randn(M, N, dtype=dt, device=dev)
    w = 1 + 0.1 * torch.randn(N, dtype=dt, device=dev)
    b = 0.1 * torch.randn(N, dtype=dt, device=dev)
    return (x, w, b), {"eps": 1e-5}


def reference(x, weight, bias, eps=1e-5):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)

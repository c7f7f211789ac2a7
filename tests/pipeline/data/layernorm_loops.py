import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _ln_loop(X, Y, W, B, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc2 = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        xc = tl.where(cols < N, x - mean, 0.0)
        acc2 += xc * xc
    rstd = 1.0 / tl.sqrt(tl.sum(acc2, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        tl.store(Y + cols, (x - mean) * rstd * w + b, mask=mask)


@tad.autodiff(grad_inputs=("x", "w", "b"))
def ln(x, w, b, eps=1e-5):
    M, N = x.shape
    y = torch.empty_like(x)
    _ln_loop[(M,)](x, y, w, b, x.stride(0), N, eps, BLOCK=16)
    return y


SWEEP = [{"M": 3, "N": 37}, {"M": 2, "N": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    M, N = dims["M"], dims["N"]
    return (torch.randn(M, N, dtype=dt, device=dev), 1 + 0.1 * torch.randn(N, dtype=dt, device=dev),
            0.1 * torch.randn(N, dtype=dt, device=dev)), {}


def reference(x, w, b, eps=1e-5):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)

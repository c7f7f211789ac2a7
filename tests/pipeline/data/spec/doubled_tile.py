"""A tile twice BLOCK long, BLOCK varying with N: the gradient's coverage and the re-grid's
partial rows are guarded on 2 * BLOCK >= N, which the launcher evaluates from the launch's BLOCK (it
looked up a scalar named "2 * BLOCK" and raised KeyError)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _scale_rows(X, W, Y, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, 2 * BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0)
    w = tl.load(W + cols, mask=mask, other=0.0)
    tl.store(Y + row * stride + cols, x * w, mask=mask)


@tad.autodiff(grad_inputs=("x", "w"))
def scale_rows(x, w):
    M, N = x.shape
    y = torch.empty_like(x)
    _scale_rows[(M,)](x, w, y, N, x.stride(0), BLOCK=triton.next_power_of_2(N) // 2)
    return y


DTYPES = [torch.float32]
SWEEP = [{"M": 7, "N": 20}, {"M": 5, "N": 40}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    M, N = dims["M"], dims["N"]
    return (torch.randn(M, N, dtype=dt, device=dev), torch.randn(N, dtype=dt, device=dev)), {}


def reference(x, w):
    return x * w

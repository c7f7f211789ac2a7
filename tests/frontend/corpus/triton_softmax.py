"""Row-wise softmax in Triton, with an autotuned launcher and an autograd wrapper.

A realistic forward file for tad's frontend tests: decorators with configuration lists, masked
loads and stores, broadcasting with [:, None], a grid lambda reading the meta dict, and a
torch.autograd.Function.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import torch
import triton
import triton.language as tl


def _configs():
    return [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
        for bm in (1, 2, 4)
        for bn in (128, 256, 1024)
        for w, s in [(4, 2), (8, 3)]
        if bm * bn <= 4096
    ]


@triton.autotune(configs=_configs(), key=["M", "N"])
@triton.jit
def softmax_kernel(
    X, Y,
    stride_xm, stride_ym,
    M, N: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(X + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=1)[:, None]
    num = tl.exp(x.to(tl.float32))
    den = tl.sum(num, axis=1)
    y = num / den[:, None]
    tl.store(Y + rows[:, None] * stride_ym + cols[None, :], y, mask=mask)


@triton.jit
def _online_max(m_i, x, BLOCK: tl.constexpr):
    m_new = tl.maximum(m_i, tl.max(x, 1))
    alpha = tl.exp(m_i - m_new)
    return m_new, alpha


def softmax(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    assert x.ndim == 2, f"expected a matrix, got shape {tuple(x.shape)!r}"
    M, N = x.shape
    y = torch.empty_like(x) if out is None else out
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]),)
    softmax_kernel[grid](x, y, x.stride(0), y.stride(0), M, N)
    return y


class Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        y = softmax(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy: torch.Tensor) -> Tuple[torch.Tensor]:
        (y,) = ctx.saved_tensors
        dx = y * (dy - (dy * y).sum(dim=-1, keepdim=True))
        return dx


SWEEP = [dict(M=m, N=n) for m in (1, 7, 64) for n in (16, 1000, 4096) if m * n < 1 << 20]


def make_args(M: int, N: int, dtype=torch.float32, device: str = "cuda"):
    torch.manual_seed(0)
    return (torch.randn(M, N, dtype=dtype, device=device, requires_grad=True),)


def reference(x):
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


if __name__ == "__main__":
    for dims in SWEEP:
        (x,) = make_args(**dims)
        err = (softmax(x) - reference(x)).abs().max().item()
        print(f"{dims['M']:>5}x{dims['N']:<5} max err {err:.3e} ok={err < 1e-5}")

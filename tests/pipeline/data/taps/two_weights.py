"""Two per-channel weights A, B [C, W] loaded tap by tap, interleaved:
y[r, c] = sum_j A[c, j] x^(j+1) + B[c, j] (x^(j+1) + 1). The backward's atomic adds to dA and dB
interleave (dB_j, dA_j, ...); the re-grid groups its accumulators by buffer, and each
sum must reach its own (a review found them crossed)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _two_poly(X, A, B, Y, C, stride_x, stride_ac, stride_bc, WIDTH: tl.constexpr, BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    chans = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    ok = chans < C
    x = tl.load(X + row * stride_x + chans, mask=ok, other=0.0)
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    p = x
    for j in tl.static_range(WIDTH):
        a = tl.load(A + chans * stride_ac + j, mask=ok, other=0.0)
        b = tl.load(B + chans * stride_bc + j, mask=ok, other=0.0)
        acc += a * p + b * (p + 1.0)
        p = p * x
    tl.store(Y + row * stride_x + chans, acc, mask=ok)


@tad.autodiff(grad_inputs=("x", "a", "b"))
def two_poly(x, a, b):
    R, C = x.shape
    y = torch.empty_like(x)
    block_c = 16
    _two_poly[(R, triton.cdiv(C, block_c))](x, a, b, y, C, x.stride(0), a.stride(0), b.stride(0),
                                            WIDTH=a.shape[1], BLOCK_C=block_c)
    return y


DTYPES = [torch.float32]
SWEEP = [{"R": 5, "C": 20, "W": 2}, {"R": 9, "C": 37, "W": 3}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    R, C, W = dims["R"], dims["C"], dims["W"]
    a = torch.randn(C, W, dtype=dt, device=dev)
    b = torch.randn(C, W, dtype=dt, device=dev)
    return (0.5 * torch.randn(R, C, dtype=dt, device=dev), a, b), {}


def reference(x, a, b):
    W = a.shape[1]
    pa = torch.stack([x ** (j + 1) for j in range(W)], dim=-1)
    pb = torch.stack([x ** (j + 1) + 1.0 for j in range(W)], dim=-1)
    return (pa * a).sum(-1) + (pb * b).sum(-1)

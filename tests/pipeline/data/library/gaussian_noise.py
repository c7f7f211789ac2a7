"""Multiplicative Gaussian noise (Gaussian dropout): y = x * (1 + sigma * n), n = tl.randn(seed,
element index). The noise gets no gradient; the backward replays tl.randn with the same seed and
offsets, so it multiplies by the same noise."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _noise_fwd(X, Y, n, sigma, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(X + offs, mask=m, other=0.0)
    tl.store(Y + offs, x * (1.0 + sigma * tl.randn(seed, offs)), mask=m)


@tad.autodiff(grad_inputs=("x",))
def gaussian_noise(x, sigma=0.1, seed=7):
    y = torch.empty_like(x)
    n = x.numel()
    _noise_fwd[(triton.cdiv(n, 64),)](x, y, n, sigma, seed, BLOCK=64)
    return y


SWEEP = [{"n": 200}, {"n": 77}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["n"], dtype=dtype, device=device),), {"sigma": 0.1, "seed": 7}

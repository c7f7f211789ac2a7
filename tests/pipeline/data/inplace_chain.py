"""A stub whose launches update buffers in place, for the backward of mutation: an output written
by one launch and updated in place by the next (a bias + activation epilogue), then partly
overwritten by a third (the overwritten values must get no gradient), accumulated into with
atomics by a fourth, and a stub input updated in place through two parameters that alias it, then
returned."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def scale(X, W, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask).to(tl.float32)
    w = tl.load(W + offs % 4).to(tl.float32)
    tl.store(Y + offs, (x * w).to(Y.dtype.element_ty), mask=mask)


@triton.jit
def bias_silu_(Y, B, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    t = tl.load(Y + offs, mask=mask).to(tl.float32) + tl.load(B + offs % 4).to(tl.float32)
    tl.store(Y + offs, (t / (1.0 + tl.exp(-t))).to(Y.dtype.element_ty), mask=mask)


@triton.jit
def overwrite_head(X, Y, n_head, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_head
    x = tl.load(X + offs, mask=mask).to(tl.float32)
    tl.store(Y + offs, tl.sin(x).to(Y.dtype.element_ty), mask=mask)


@triton.jit
def add_square(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask).to(tl.float32)
    tl.atomic_add(Y + offs, x * x, mask=mask)


@triton.jit
def gate_(Z_IN, Y, Z_OUT, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    z = tl.load(Z_IN + offs, mask=mask).to(tl.float32)
    y = tl.load(Y + offs, mask=mask).to(tl.float32)
    tl.store(Z_OUT + offs, (z * tl.sigmoid(y) + z * z).to(Z_OUT.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x", "w", "b", "z"))
def inplace_chain(x, w, b, z):
    n = x.numel()
    y = torch.empty_like(x, dtype=torch.float32)
    grid = (triton.cdiv(n, 64),)
    scale[grid](x, w, y, n, BLOCK=64)
    bias_silu_[grid](y, b, n, BLOCK=64)
    overwrite_head[grid](x, y, n // 3, BLOCK=64)
    add_square[grid](x, y, n, BLOCK=64)
    gate_[grid](z, y, z, n, BLOCK=64)
    return y, z


SWEEP = [{"n": 100}, {"n": 4096}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    n = dims["n"]
    x = torch.randn(n, dtype=dtype, device=device)
    w = torch.randn(4, dtype=dtype, device=device)
    b = 0.5 * torch.randn(4, dtype=dtype, device=device)
    z = torch.randn(n, dtype=dtype, device=device)
    return (x, w, b, z), {}


def reference(x, w, b, z):
    n = x.numel()
    t = x * w.repeat(n // 4 + 1)[:n] + b.repeat(n // 4 + 1)[:n]
    y = t * torch.sigmoid(t)
    head = n // 3
    y = torch.cat([torch.sin(x[:head]), y[head:]]) + x * x
    return y, z * torch.sigmoid(y) + z * z

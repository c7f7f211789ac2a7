"""Kernels that are not top-level @triton.jit defs: a @staticmethod kernel launched as
Cls.kernel[grid], a kernel kept as a class attribute, K = triton.jit(fn), and a kernel the stub
chooses by a Python expression (k = a if flag else b; k[grid](...))."""
import torch
import triton
import triton.language as tl

import tad


class Ops:
    @staticmethod
    @triton.jit
    def square(X, Y, N, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        m = cols < N
        x = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(Y + row * N + cols, x * x, mask=m)


def _exp_py(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, tl.exp(x), mask=m)


_exp = triton.jit(_exp_py)


@triton.jit
def _sin(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, tl.sin(x), mask=m)


@triton.jit
def _cos(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, tl.cos(x), mask=m)


class Table:
    trig = _sin


@tad.autodiff(grad_inputs=("x",))
def kernel_objects(x, use_cos=True):
    M, N = x.shape
    a, b, c, d = (torch.empty_like(x) for _ in range(4))
    BLOCK = triton.next_power_of_2(N)
    Ops.square[(M,)](x, a, N, BLOCK=BLOCK)
    _exp[(M,)](x, b, N, BLOCK=BLOCK)
    Table.trig[(M,)](x, c, N, BLOCK=BLOCK)
    k = _cos if use_cos else _sin
    k[(M,)](x, d, N, BLOCK=BLOCK)
    return a, b, c, d


SWEEP = [{"M": 3, "N": 20}, {"M": 2, "N": 7}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {}

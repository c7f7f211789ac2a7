"""Derivatives the user gives for elementwise helpers (TAD_DERIVATIVES = {helper: (d_x, ...)}, one
@triton.jit function or None per parameter): the backward uses them instead of differentiating
the helper's body (softplus through its sigmoid; a two-parameter helper, one parameter without)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _softplus(x):
    return tl.log(1.0 + tl.exp(x))


@triton.jit
def _softplus_dx(x):
    return tl.sigmoid(x)


@triton.jit
def _scaled(x, w, k):
    return x * w + k * x


@triton.jit
def _scaled_dx(x, w, k):
    return w + k


@triton.jit
def _scaled_dw(x, w, k):
    return x


TAD_DERIVATIVES = {_softplus: (_softplus_dx,), _scaled: (_scaled_dx, _scaled_dw, None)}


@triton.jit
def _act_fwd(X, W, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, _scaled(_softplus(x), w, 2.0), mask=m)


@tad.autodiff(grad_inputs=("x", "w"))
def user_derivatives(x, w):
    M, N = x.shape
    y = torch.empty_like(x)
    _act_fwd[(M,)](x, w, y, N, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 3, "N": 20}, {"M": 2, "N": 7}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=device)
    return (x, torch.randn(dims["N"], dtype=dtype, device=device)), {}


def reference(x, w):
    return torch.nn.functional.softplus(x) * w + 2.0 * torch.nn.functional.softplus(x)

"""A helper tad has no rule for (inline PTX computing tanh) given a differentiable definition in
TAD_DIFFERENTIATE_AS: tad differentiates the definition, the forward still runs the helper."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _fast_tanh(x):
    return tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True,
                                     pack=1)


@triton.jit
def _tanh_definition(x):
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(x < 0.0, -t, t)


TAD_DIFFERENTIATE_AS = {_fast_tanh: _tanh_definition}


@triton.jit
def _act_fwd(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, x * _fast_tanh(x), mask=m)


@tad.autodiff(grad_inputs=("x",))
def differentiate_as(x):
    M, N = x.shape
    y = torch.empty_like(x)
    _act_fwd[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 3, "N": 20}, {"M": 2, "N": 7}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {}


def reference(x):
    return x * torch.tanh(x)

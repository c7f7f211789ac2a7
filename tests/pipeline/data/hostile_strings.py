"""A string constexpr that holds quotes, a backslash, a newline and non-ASCII text: the generated
module writes it (in dispatch, messages and docstrings) as a Python literal, never as code."""
import torch
import triton
import triton.language as tl

import tad

HOSTILE = 'soft"""plus\\ \u00e9\n\'x'


@triton.jit
def _act_fwd(X, Y, N, ACTIVATION: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    h = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    if ACTIVATION == "tanh":
        h = tl.sigmoid(2.0 * h) * 2.0 - 1.0
    elif ACTIVATION == 'soft"""plus\\ \u00e9\n\'x':
        h = tl.log(1.0 + tl.exp(h))
    tl.store(Y + row * N + cols, h, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def act(x, activation="tanh"):
    M, N = x.shape
    y = torch.empty_like(x)
    _act_fwd[(M,)](x, y, N, ACTIVATION=activation, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 3, "N": 20, "activation": "tanh"}, {"M": 5, "N": 33, "activation": HOSTILE}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=dims.get("device", "cuda"))
    return (x,), {"activation": dims.get("activation", "tanh")}


def reference(x, activation="tanh"):
    return torch.tanh(x) if activation == "tanh" else torch.nn.functional.softplus(x)

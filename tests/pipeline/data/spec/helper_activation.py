"""An activation chosen by a constexpr string inside an inlined helper: each activation of the SWEEP
gets its own backward, and the module refuses one it was not generated for. Before lowering recorded
the constexprs a helper's static `if` read, every activation got the first one's backward."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _activate(h, ACTIVATION: tl.constexpr):
    if ACTIVATION == "tanh":
        h = tl.sigmoid(2.0 * h) * 2.0 - 1.0
    elif ACTIVATION == "softplus":
        h = tl.log(1.0 + tl.exp(h))
    return h


@triton.jit
def _scaled(x, w, ACT: tl.constexpr):
    return _activate(x * w, ACT)


@triton.jit
def _act_fwd(X, W, Y, N, ACT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=0.0)
    w = tl.load(W + cols, mask=mask, other=0.0)
    tl.store(Y + row * N + cols, _scaled(x, w, ACT), mask=mask)


@tad.autodiff(grad_inputs=("x", "w"))
def act(x, w, activation="tanh"):
    M, N = x.shape
    y = torch.empty_like(x)
    _act_fwd[(M,)](x, w, y, N, ACT=activation, BLOCK=triton.next_power_of_2(N))
    return y


# tl.exp and tl.log take float32 and float64 only: the forward itself does not compile for float16.
DTYPES = [torch.float32]
SWEEP = [{"M": 3, "N": 20, "activation": "tanh"}, {"M": 5, "N": 33, "activation": "softplus"}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=device)
    w = torch.randn(dims["N"], dtype=dtype, device=device)
    return (x, w), {"activation": dims.get("activation", "tanh")}


def reference(x, w, activation="tanh"):
    h = x * w
    return torch.tanh(h) if activation == "tanh" else torch.nn.functional.softplus(h)

"""y = act(x) for one of four activations chosen by an ACTIVATION constexpr, in a @triton.jit
helper with one branch per mode, as activation libraries write them: softplus, mish, ELU and leaky
ReLU (ALPHA is ELU's scale and leaky ReLU's slope)."""
import torch
import triton
import triton.language as tl
from triton.language.extra.libdevice import tanh

import tad


@triton.jit
def _softplus(x):
    # max(x, 0) + log(1 + e^-|x|): never overflows, exact in both tails.
    return tl.maximum(x, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(x)))


@triton.jit
def _activation(x, ACTIVATION: tl.constexpr, ALPHA: tl.constexpr):
    if ACTIVATION == "softplus":
        y = _softplus(x)
    elif ACTIVATION == "mish":
        y = x * tanh(_softplus(x))
    elif ACTIVATION == "elu":
        # The exp sees only non-positive inputs, so the untaken side cannot overflow.
        y = tl.where(x > 0.0, x, ALPHA * (tl.exp(tl.minimum(x, 0.0)) - 1.0))
    else:
        y = tl.where(x >= 0.0, x, ALPHA * x)
    return y


@triton.jit
def _activation_fwd(X, Y, n, ACTIVATION: tl.constexpr, ALPHA: tl.constexpr,
                    BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    y = _activation(x, ACTIVATION, ALPHA)
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


_ALPHA = {"softplus": 1.0, "mish": 1.0, "elu": 1.0, "leaky_relu": 0.01}


@tad.autodiff(grad_inputs=("x",))
def activation(x, kind="mish"):
    y = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    _activation_fwd[grid](x, y, n, ACTIVATION=kind, ALPHA=_ALPHA[kind], BLOCK_SIZE=1024)
    return y


SWEEP = [
    {"n": 1500, "kind": "mish"},
    {"n": 3000, "kind": "softplus"},
    {"n": 2100, "kind": "elu"},
    {"n": 1100, "kind": "leaky_relu"},
    {"n": 1 << 22, "kind": "mish"},
    {"n": 1 << 22, "kind": "elu"},
    {"n": 1 << 22, "kind": "softplus"},
    {"n": 1 << 22, "kind": "leaky_relu"},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = 3.0 * torch.randn(dims["n"], dtype=dtype, device=device)
    return (x,), {"kind": dims.get("kind", "mish")}


def reference(x, kind="mish"):
    F = torch.nn.functional
    if kind == "softplus":
        return F.softplus(x)
    if kind == "mish":
        return F.mish(x)
    if kind == "elu":
        return F.elu(x, alpha=_ALPHA["elu"])
    return F.leaky_relu(x, _ALPHA["leaky_relu"])


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    # fwd: x in, y out; bwd: x, dy in, dx out.
    return dims["n"] * item * (2 if mode == "fwd" else 3)

"""Forward mode across static-if specializations: the activation is a constexpr string, so each one
gets its own backward and tangent kernel. Two outputs, the second transposed in memory."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _act_fwd(X, W, Y, Z, stride_zm, stride_zn, N, ACTIVATION: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    h = x * w
    if ACTIVATION == "tanh":
        h = tl.sigmoid(2.0 * h) * 2.0 - 1.0
    elif ACTIVATION == "softplus":
        h = tl.log(1.0 + tl.exp(h))
    tl.store(Y + row * N + cols, h, mask=mask)
    tl.store(Z + row * stride_zm + cols * stride_zn, h * x, mask=mask)


@tad.autodiff(grad_inputs=("x", "w"))
def act(x, w, activation="tanh"):
    M, N = x.shape
    y = torch.empty_like(x)
    z = torch.empty(N, M, dtype=x.dtype, device=x.device).t()
    _act_fwd[(M,)](x, w, y, z, z.stride(0), z.stride(1), N, ACTIVATION=activation,
                   BLOCK=triton.next_power_of_2(N))
    return y, z


SWEEP = [{"M": 3, "N": 20, "activation": "tanh"}, {"M": 5, "N": 33, "activation": "softplus"}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=device)
    w = torch.randn(dims["N"], dtype=dtype, device=device)
    return (x, w), {"activation": dims.get("activation", "tanh")}


def reference(x, w, activation="tanh"):
    h = x * w
    h = torch.tanh(h) if activation == "tanh" else torch.nn.functional.softplus(h)
    return h, h * x

"""A string constexpr holding a newline (and a quote) chosen by a static `if`: the generated module
compares each launch's value with its Python literal, which must stay on one line."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _mode_fwd(X, Y, N, MODE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0)
    if MODE == "square\nit's":
        y = x * x
    else:
        y = tl.exp(x)
    tl.store(Y + row * N + cols, y, mask=m)


@tad.autodiff(grad_inputs=("x",))
def mode(x, mode="square\nit's"):
    M, N = x.shape
    y = torch.empty_like(x)
    _mode_fwd[(M,)](x, y, N, MODE=mode, BLOCK=triton.next_power_of_2(N))
    return y


# tl.exp and tl.log take float32 and float64 only: the forward itself does not compile for float16.
DTYPES = [torch.float32]
SWEEP = [{"M": 3, "N": 20, "mode": "square\nit's"}, {"M": 2, "N": 9, "mode": "exp\tx"}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {"mode": dims["mode"]}

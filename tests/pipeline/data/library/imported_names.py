"""Names as kernel libraries import and alias them: libdevice functions imported by bare name,
triton.language under another alias, module-level aliases of tl functions and of a helper, and
annotated module-level constexprs (NAME: tl.constexpr = tl.constexpr(...))."""
import torch
import triton
import triton.language as tl
from triton import language as language
from triton.language.extra.libdevice import rsqrt, tanh

import tad

_MODE_SQUARE: tl.constexpr = tl.constexpr(0)
_MODE_CUBE: tl.constexpr = tl.constexpr(1)
_SCALE: tl.constexpr = tl.constexpr(0.5)
my_cast = tl.cast
my_exp = language.exp


@triton.jit
def _square(x):
    return x * x


square_alias = _square


@triton.jit
def _names_fwd(X, Y, N, MODE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = my_cast(tl.load(X + row * N + cols, mask=m, other=0.0), language.float32)
    y = tanh(x) * rsqrt(x * x + 1.0) + my_exp(x * _SCALE)
    if MODE == _MODE_CUBE:
        y = y * square_alias(x)
    tl.store(Y + row * N + cols, y, mask=m)


@tad.autodiff(grad_inputs=("x",))
def imported_names(x, mode=1):
    M, N = x.shape
    y = torch.empty_like(x)
    _names_fwd[(M,)](x, y, N, MODE=mode, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 3, "N": 20}, {"M": 2, "N": 7}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {}

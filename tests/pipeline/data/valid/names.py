"""Names the backward derives that Python or Triton reserve: a parameter `do` beside a value `o`
whose adjoint `do` is a temporary of the reverse loop (Triton would take it for a loop-carried value
starting as the scalar parameter), and a value `el` whose adjoint `del` is a keyword, carried by the
reverse of the recurrence."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _names_fwd(X, Y, N, do, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    el = x * 2.0
    for i in range(3):
        o = x * x + i
        acc = acc * x + el * o
    tl.store(Y + row * N + cols, acc * do, mask=m)


@tad.autodiff(grad_inputs=("x",))
def names(x):
    M, N = x.shape
    y = torch.empty_like(x)
    _names_fwd[(M,)](x, y, N, 0.5, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 2, "N": 8}, {"M": 3, "N": 20}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device) * 0.5,), {}


def reference(x):
    acc = torch.zeros_like(x)
    for i in range(3):
        acc = acc * x + 2.0 * x * (x * x + i)
    return acc * 0.5

"""A masked linear tile whose loads' `other`s are a tile loaded from another grad input and a
non-zero constant; the row sum reads every lane, the masked-off ones too."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _k(X, R, O, H, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inb = cols < N
    offs = row * N + cols
    m = inb & (cols % 3 != 0)
    o = tl.load(O + offs, mask=inb, other=0.0)
    x = tl.load(X + offs, mask=m, other=o)
    r = tl.load(R + offs, mask=m, other=2.0)
    h = x - 0.5 * r
    tl.store(H + offs, h, mask=m)
    ss = tl.sum(h * h, axis=0)
    tl.store(Y + offs, h * ss + o * o, mask=inb)


@tad.autodiff(grad_inputs=("x", "r", "o"))
def k(x, r, o):
    M, N = x.shape
    y = torch.empty_like(x)
    h = torch.zeros_like(x)
    _k[(M,)](x, r, o, h, y, N, BLOCK=triton.next_power_of_2(N))
    return y, h


SWEEP = [{"M": 4, "N": 32}, {"M": 1, "N": 20}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    M, N = dims["M"], dims["N"]
    return tuple(torch.randn(M, N, dtype=dt, device=dev) for _ in range(3)), {}

"""Integer constexprs cast to float (tl.cast, and Triton's promotion next to a float tile): a
constexpr is a Python int in the emitted kernel, which has no .to()."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _cast_fwd(X, Y, N, K: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0)
    k = tl.cast(K, tl.float32)
    inv = 1.0 / tl.cast(BLOCK, tl.float32)
    tl.store(Y + row * N + cols, x * x * k * inv + x * K, mask=m)


@tad.autodiff(grad_inputs=("x",))
def cast_constexpr(x, k=3):
    M, N = x.shape
    y = torch.empty_like(x)
    _cast_fwd[(M,)](x, y, N, K=k, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 3, "N": 20, "k": 3}, {"M": 2, "N": 40, "k": 5}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {"k": dims["k"]}

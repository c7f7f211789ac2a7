"""Values folded from constexprs: a trip count from tl.cdiv(D, BD), a float constexpr made a scalar by
tl.full, a tl.static_range(W) unrolled. The SWEEP varies each; before folding kept its spelling (and
recorded what it could not spell), the backward baked in the first entry's values."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _fold_fwd(X, Y, N, D: tl.constexpr, BD: tl.constexpr, EPS: tl.constexpr, W: tl.constexpr):
    row = tl.program_id(0)
    eps = tl.full((), EPS, tl.float32)
    cols = tl.arange(0, BD)
    acc = tl.zeros((BD,), tl.float32)
    for b in range(tl.cdiv(D, BD)):
        m = b * BD + cols < N
        x = tl.load(X + row * N + b * BD + cols, mask=m, other=0.0)
        for k in tl.static_range(W):
            x = x * x + eps
        acc += x
    tl.store(Y + row * BD + cols, acc)


@tad.autodiff(grad_inputs=("x",))
def fold(x, eps=0.5, w=2):
    M, N = x.shape
    y = torch.empty(M, 8, dtype=x.dtype, device=x.device)
    _fold_fwd[(M,)](x, y, N, D=N, BD=8, EPS=eps, W=w)
    return y


# Entry 2 differs from entry 1 in cdiv(D, BD) (1 -> 3 blocks) and EPS, entry 3 in W.
SWEEP = [{"M": 2, "N": 8, "eps": 0.5, "w": 2}, {"M": 3, "N": 20, "eps": 0.25, "w": 2},
         {"M": 2, "N": 20, "eps": 0.25, "w": 3}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["M"], dims["N"], dtype=dtype, device=device) * 0.5
    return (x,), {"eps": dims["eps"], "w": dims["w"]}


def reference(x, eps=0.5, w=2):
    M, N = x.shape
    v = torch.nn.functional.pad(x, (0, (-N) % 8))
    for _ in range(w):
        v = v * v + eps
    return v.reshape(M, -1, 8).sum(1)

"""tl.debug_barrier() anywhere in a forward: first, between a load and its use, in a static and a
run-time `if`, in a loop, after the last store. It orders threads on the GPU and changes no value,
so the backward keeps it where the forward had it and the gradients are unaffected."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _barriers_fwd(X, Y, N, n_active, SYNC: tl.constexpr, BLOCK: tl.constexpr):
    tl.debug_barrier()
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, N, BLOCK):
        m = start + cols < N
        x = tl.load(X + row * N + start + cols, mask=m, other=0.0)
        tl.debug_barrier()
        acc += x * x
    if SYNC:
        tl.debug_barrier()
    if row < n_active:
        tl.debug_barrier()
        acc = acc * 2.0
    tl.store(Y + row * BLOCK + cols, acc)
    tl.debug_barrier()


@tad.autodiff(grad_inputs=("x",))
def barriers(x):
    M, N = x.shape
    y = torch.empty(M, 16, dtype=x.dtype, device=x.device)
    _barriers_fwd[(M,)](x, y, N, M // 2, SYNC=True, BLOCK=16)
    return y


SWEEP = [{"M": 3, "N": 20}, {"M": 2, "N": 40}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {}


def reference(x):
    M, N = x.shape
    xp = torch.nn.functional.pad(x.float(), (0, (-N) % 16))
    acc = (xp * xp).reshape(M, -1, 16).sum(1)
    scale = torch.where(torch.arange(M, device=x.device) < M // 2, 2.0, 1.0)
    return (acc * scale[:, None]).to(x.dtype)

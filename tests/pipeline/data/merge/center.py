"""y = x - mean(x) per row, in blocks: one loop for the mean, one to subtract it.

The backward's two reverse loops each add a term of dX (dy, and the mean's share -sum(dy)/N); they
run over one range at one address, so the last adds their sum once, and with each row its own
elements (stride >= N, the launcher's guard) stores it. `pad` leaves a gap after each row."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _center(X, Y, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + cols, x - mean, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def center(x):
    M, N = x.shape
    y = torch.empty(M, N, dtype=x.dtype, device=x.device)
    _center[(M,)](x, y, x.stride(0), N, BLOCK=min(triton.next_power_of_2(N), 32))
    return y


SWEEP = [{"M": 3, "N": 100, "pad": 0}, {"M": 4, "N": 64, "pad": 5}, {"M": 2, "N": 7, "pad": 0}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    base = torch.randn(dims["M"], dims["N"] + dims["pad"], dtype=dt, device=dev)
    return (base[:, :dims["N"]],), {}


def reference(x):
    return x - x.float().mean(dim=-1, keepdim=True).to(x.dtype)

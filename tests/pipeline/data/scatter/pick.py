"""y[r] = sum(x[r, :]**2) + 3 * x.flat[idx[r, 0]] - x.flat[idx[r, 1]] (nothing picked where an index
is negative), one program per row.

The backward stores each row's 2x and scatters 3 and -1 onto the picked elements: folded into the
row's store when the element is in the program's own row (one bit each in the program's hits word),
added by the scatter kernel when it is in another row (two rows may pick one element: those adds are
atomic)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _pick(X, Idx, Y, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
    idx = tl.load(Idx + 2 * row)
    picked = tl.load(X + idx, mask=idx >= 0, other=0.0).to(tl.float32)
    idx2 = tl.load(Idx + 2 * row + 1)
    picked2 = tl.load(X + idx2, mask=idx2 >= 0, other=0.0).to(tl.float32)
    tl.store(Y + row, tl.sum(x * x, axis=0) + 3.0 * picked - picked2)


@tad.autodiff(grad_inputs=("x",))
def pick(x, idx):
    M, N = x.shape
    y = torch.empty(M, dtype=x.dtype, device=x.device)
    _pick[(M,)](x, idx, y, x.stride(0), N, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 6, "N": 5}, {"M": 9, "N": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    M, N = dims["M"], dims["N"]
    x = torch.randn(M, N, dtype=dt, device=dev)
    # By row: its own row's elements, none, another row's, and two rows picking one element; the
    # second pick in the own row where the first is not, and the other way round.
    own = [r * N + (r * 3) % N for r in range(M)]
    first = [own[r] if r % 3 == 0 else -1 if r % 3 == 1 else own[(r + 1) % M] for r in range(M)]
    second = [own[(r + 2) % M] if r % 3 == 0 else (own[r] + 1) % (M * N) if r % 3 == 1 else own[r] for r in range(M)]
    idx = torch.tensor([first, second], dtype=torch.int64, device=dev).t().contiguous()
    return (x, idx), {}


def reference(x, idx):
    flat = x.float().reshape(-1)
    picked = torch.where(idx >= 0, flat[idx.clamp(min=0)], torch.zeros((), device=x.device))
    return ((x.float() ** 2).sum(-1) + 3 * picked[:, 0] - picked[:, 1]).to(x.dtype)

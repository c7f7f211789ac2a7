"""PReLU with a learned slope per channel: y = x if x >= 0 else a[c] x, for x [B, C, L] and a [C].
Programs own BLOCK_R rows of the flattened [B * C, L] view (row r is channel r % C) and BLOCK_L
positions, so the slopes' gradient sums over samples, positions and programs."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _prelu_fwd(X, A, Y, R, C, L, stride_r, BLOCK_R: tl.constexpr, BLOCK_L: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    pos = tl.program_id(1) * BLOCK_L + tl.arange(0, BLOCK_L)
    row_ok = rows < R
    mask = row_ok[:, None] & (pos[None, :] < L)
    offs = rows[:, None] * stride_r + pos[None, :]
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(A + rows % C, mask=row_ok, other=0.0).to(tl.float32)
    y = tl.where(x >= 0.0, x, a[:, None] * x)
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x", "slope"))
def prelu(x, slope):
    B, C, L = x.shape
    y = torch.empty_like(x)
    grid = (triton.cdiv(B * C, 8), triton.cdiv(L, 128))
    # Contiguous x and y: row r of the [B * C, L] view starts at r * L.
    _prelu_fwd[grid](x, slope, y, B * C, C, L, x.stride(1), BLOCK_R=8, BLOCK_L=128)
    return y


SWEEP = [
    {"B": 2, "C": 5, "L": 150},
    {"B": 3, "C": 12, "L": 40},
    {"B": 32, "C": 256, "L": 4096},
    {"B": 16, "C": 64, "L": 65536},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["B"], dims["C"], dims["L"], dtype=dtype, device=device)
    slope = 0.25 + 0.1 * torch.randn(dims["C"], dtype=dtype, device=device)
    return (x, slope), {}


def reference(x, slope):
    return torch.nn.functional.prelu(x, slope)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["B"] * dims["C"] * dims["L"]
    # fwd: x in, y out; bwd: x, dy in, dx out (the slopes are small).
    return n * item * (2 if mode == "fwd" else 3)

"""Row-wise cosine similarity of x, y [M, D]: out = x.y / sqrt(max(|x|^2 |y|^2, eps^2)), as torch
computes it. Programs own BLOCK_M rows and walk D in BLOCK_D columns, keeping three accumulators
(x.y, |x|^2, |y|^2) as [BLOCK_M, BLOCK_D] tiles reduced once at the end."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _cosine_similarity_fwd(X, Y, Out, M, D, stride_x, stride_y, eps, BLOCK_M: tl.constexpr,
                           BLOCK_D: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    dot = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    xx = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    yy = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        cols = d0 + tl.arange(0, BLOCK_D)
        mask = row_ok[:, None] & (cols[None, :] < D)
        x = tl.load(X + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0)
        y = tl.load(Y + rows[:, None] * stride_y + cols[None, :], mask=mask, other=0.0)
        x = x.to(tl.float32)
        y = y.to(tl.float32)
        dot += x * y
        xx += x * x
        yy += y * y
    denom = tl.sqrt(tl.maximum(tl.sum(xx, axis=1) * tl.sum(yy, axis=1), eps * eps))
    tl.store(Out + rows, (tl.sum(dot, axis=1) / denom).to(Out.dtype.element_ty), mask=row_ok)


@tad.autodiff(grad_inputs=("x", "y"))
def cosine_similarity(x, y, eps=1e-8):
    M, D = x.shape
    out = torch.empty(M, dtype=x.dtype, device=x.device)
    block_d = min(triton.next_power_of_2(D), 64)
    _cosine_similarity_fwd[(triton.cdiv(M, 16),)](x, y, out, M, D, x.stride(0), y.stride(0), eps,
                                                  BLOCK_M=16, BLOCK_D=block_d)
    return out


SWEEP = [
    {"M": 21, "D": 100},
    {"M": 40, "D": 33},
    {"M": 65536, "D": 1024},
    {"M": 8192, "D": 8192},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = torch.randn(dims["M"], dims["D"], dtype=dtype, device=device)
    y = 0.5 * x + torch.randn(dims["M"], dims["D"], dtype=dtype, device=device)
    return (x, y), {"eps": 1e-8}


def reference(x, y, eps=1e-8):
    return torch.nn.functional.cosine_similarity(x, y, dim=-1, eps=eps)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["M"] * dims["D"]
    # fwd reads x and y; bwd reads them again and writes both gradients.
    return n * item * (2 if mode == "fwd" else 4)

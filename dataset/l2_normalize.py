"""L2-normalise the rows of x [M, N]: y = x / max(|x|, eps), as F.normalize does. Rows are short
(embedding heads), so each program takes a [BLOCK_M, BLOCK_N] tile of BLOCK_M whole rows and
reduces along axis 1."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _l2_normalize_fwd(X, Y, M, N, stride_x, stride_y, eps, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(X + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    norm = tl.sqrt(tl.sum(x * x, axis=1))
    y = x / tl.maximum(norm, eps)[:, None]
    tl.store(Y + rows[:, None] * stride_y + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x",))
def l2_normalize(x, eps=1e-12):
    M, N = x.shape
    y = torch.empty_like(x)
    block_n = triton.next_power_of_2(N)
    block_m = max(1, min(64, 4096 // block_n))
    _l2_normalize_fwd[(triton.cdiv(M, block_m),)](x, y, M, N, x.stride(0), y.stride(0), eps,
                                                  BLOCK_M=block_m, BLOCK_N=block_n)
    return y


SWEEP = [
    {"M": 50, "N": 24},
    {"M": 13, "N": 200},
    {"M": 262144, "N": 128},
    {"M": 65536, "N": 768},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {"eps": 1e-12}


def reference(x, eps=1e-12):
    return torch.nn.functional.normalize(x, dim=-1, eps=eps)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    # fwd: x in, y out; bwd: x, dy in, dx out.
    return dims["M"] * dims["N"] * item * (2 if mode == "fwd" else 3)

"""Row logsumexp of x [M, N] for long rows, split over programs like a split-K reduction:

  partials (grid M x NB): block b of row m writes its max m_b and sum_j exp(x_j - m_b);
  combine  (grid M):      lse = m + log(sum_b s_b exp(m_b - m)), m = max_b m_b.

The two launches communicate through float32 buffers the stub allocates, so the gradient of x
flows through both.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _lse_partials(X, PartMax, PartSum, N, stride_x, num_blocks, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    blk = tl.program_id(1)
    cols = blk * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(X + row.to(tl.int64) * stride_x + cols, mask=cols < N,
                other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    tl.store(PartMax + row * num_blocks + blk, m)
    tl.store(PartSum + row * num_blocks + blk, tl.sum(tl.exp(x - m), axis=0))


@triton.jit
def _lse_combine(PartMax, PartSum, Out, num_blocks, BLOCK_B: tl.constexpr):
    row = tl.program_id(0)
    b = tl.arange(0, BLOCK_B)
    mask = b < num_blocks
    m_b = tl.load(PartMax + row * num_blocks + b, mask=mask, other=float("-inf"))
    s_b = tl.load(PartSum + row * num_blocks + b, mask=mask, other=0.0)
    m = tl.max(m_b, axis=0)
    total = tl.sum(s_b * tl.exp(m_b - m), axis=0)
    tl.store(Out + row, (m + tl.log(total)).to(Out.dtype.element_ty))


@tad.autodiff(grad_inputs=("x",))
def logsumexp_split(x, block_n=1024):
    M, N = x.shape
    num_blocks = triton.cdiv(N, block_n)
    part_max = torch.empty(M, num_blocks, dtype=torch.float32, device=x.device)
    part_sum = torch.empty(M, num_blocks, dtype=torch.float32, device=x.device)
    out = torch.empty(M, dtype=x.dtype, device=x.device)
    _lse_partials[(M, num_blocks)](x, part_max, part_sum, N, x.stride(0), num_blocks,
                                   BLOCK_N=block_n)
    _lse_combine[(M,)](part_max, part_sum, out, num_blocks,
                       BLOCK_B=triton.next_power_of_2(num_blocks))
    return out


SWEEP = [
    {"M": 3, "N": 1000, "block_n": 128},
    {"M": 5, "N": 3000, "block_n": 256},
    {"M": 4096, "N": 32000, "block_n": 1024},
    {"M": 1024, "N": 262144, "block_n": 4096},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = 2.0 * torch.randn(dims["M"], dims["N"], dtype=dtype, device=device)
    return (x,), {"block_n": dims["block_n"]}


def reference(x, block_n=1024):
    return torch.logsumexp(x, dim=-1)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["M"] * dims["N"]
    # fwd reads x once; bwd reads x and writes dx.
    return n * item * (1 if mode == "fwd" else 2)

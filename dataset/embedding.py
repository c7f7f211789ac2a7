"""Embedding lookup: out[i, :] = weight[indices[i], :] for int64 indices [N] into weight [V, D].

Indices repeat, so many programs read the same row of the table: its gradient is a scatter-add.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.heuristics({"BLOCK_D": lambda args: min(triton.next_power_of_2(args["D"]), 512)})
@triton.jit
def _embedding_fwd(Idx, W, Out, N, D, stride_w, stride_out, BLOCK_N: tl.constexpr,
                   BLOCK_D: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    row_ok = rows < N
    idx = tl.load(Idx + rows, mask=row_ok, other=0)
    mask = row_ok[:, None] & (cols[None, :] < D)
    # idx is int64, so idx * stride_w cannot overflow for large tables.
    vals = tl.load(W + idx[:, None] * stride_w + cols[None, :], mask=mask, other=0.0)
    tl.store(Out + rows[:, None].to(tl.int64) * stride_out + cols[None, :], vals, mask=mask)


@tad.autodiff(grad_inputs=("weight",))
def embedding(indices, weight):
    N = indices.numel()
    D = weight.shape[1]
    out = torch.empty(N, D, dtype=weight.dtype, device=weight.device)
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_N"]), triton.cdiv(D, meta["BLOCK_D"]))
    _embedding_fwd[grid](indices, weight, out, N, D, weight.stride(0), out.stride(0), BLOCK_N=16)
    return out


SWEEP = [
    {"V": 20, "N": 100, "D": 48},
    {"V": 50, "N": 300, "D": 100},
    {"V": 32000, "N": 16384, "D": 4096},
    {"V": 128256, "N": 16384, "D": 4096, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    indices = torch.randint(0, dims["V"], (dims["N"],), dtype=torch.int64, device=device)
    weight = torch.randn(dims["V"], dims["D"], dtype=dtype, device=device)
    return (indices, weight), {}


def reference(indices, weight):
    return torch.nn.functional.embedding(indices, weight)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    N, D = dims["N"], dims["D"]
    # fwd: gathered rows in, out written; bwd: dout in, one add per element into dweight.
    return 2 * N * D * item + N * 8

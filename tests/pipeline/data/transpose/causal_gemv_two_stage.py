"""y = tril(X) @ w in row blocks, the key loop split as the Triton tutorial's attention splits it: the
blocks below the diagonal block unmasked, then the diagonal block under the causal mask. w's
gradient is added in both loops (the loop transposition over several loops); N is a multiple of
BLOCK_M, itself a multiple of BLOCK_N, and nothing is masked by N."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _causal_gemv(X, W, Y, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, pid * BLOCK_M, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(X + rows[:, None] * stride_m + cols[None, :])
        w = tl.load(W + cols)
        acc += tl.sum(x * w[None, :], axis=1)
    for start in range(pid * BLOCK_M, (pid + 1) * BLOCK_M, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(X + rows[:, None] * stride_m + cols[None, :])
        w = tl.load(W + cols)
        x = tl.where(rows[:, None] >= cols[None, :], x, 0.0)
        acc += tl.sum(x * w[None, :], axis=1)
    tl.store(Y + rows, acc)


@tad.autodiff(grad_inputs=("x", "w"))
def causal_gemv(x, w):
    N = x.shape[0]
    y = torch.empty(N, dtype=x.dtype, device=x.device)
    _causal_gemv[(N // 8,)](x, w, y, x.stride(0), BLOCK_M=8, BLOCK_N=4)
    return y


DTYPES = [torch.float32]
SWEEP = [{"N": 32}, {"N": 24}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    N = dims["N"]
    return (torch.randn(N, N, dtype=dt, device=dev), torch.randn(N, dtype=dt, device=dev)), {}

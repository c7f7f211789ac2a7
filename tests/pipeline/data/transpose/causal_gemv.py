"""y = (A masked block-causally) @ x: row block p reads x only up to the end of its own rows,
min((p + 1) * BLOCK_M, N), as a causal attention's query block reads its keys. dx is shared by the
row blocks along a loop whose end rises with the program id: transposed, each program owns a block
of dx and sums over the row blocks from the first one that reaches it (passes/rising_end.h). With
N past the last row block's end, the last blocks of x are read by no program: their gradient is 0."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _causal_gemv(A, X, Y, M, N, stride_am, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    hi = tl.minimum((pid + 1) * BLOCK_M, N)
    for n0 in range(0, hi, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        a = tl.load(A + rows[:, None] * stride_am + cols[None, :], mask=(rows[:, None] < M) & (cols[None, :] < N),
                    other=0.0)
        x = tl.load(X + cols, mask=cols < N, other=0.0)
        acc += tl.sum(a * x[None, :], axis=1)
    tl.store(Y + rows, acc, mask=rows < M)


@tad.autodiff(grad_inputs=("a", "x"))
def causal_gemv(a, x):
    M, N = a.shape
    y = torch.empty(M, dtype=a.dtype, device=a.device)
    _causal_gemv[(triton.cdiv(M, 32),)](a, x, y, M, N, a.stride(0), BLOCK_M=32, BLOCK_N=16)
    return y


DTYPES = [torch.float32]
SWEEP = [{"M": 70, "N": 50}, {"M": 40, "N": 90}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["M"], dims["N"], dtype=dt, device=dev), torch.randn(dims["N"], dtype=dt, device=dev)), {}


def reference(a, x):
    M, N = a.shape
    ends = (torch.arange(M, device=a.device) // 32 + 1) * 32
    keep = torch.arange(N, device=a.device)[None, :] < ends[:, None]
    return (a * keep) @ x

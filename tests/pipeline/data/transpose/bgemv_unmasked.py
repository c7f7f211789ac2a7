"""y[b, h] = X[b, h] @ w[b, h] with no masks, N a multiple of BLOCK_N as the tutorials require."""
import torch
import triton
import triton.language as tl
import tad

@triton.jit
def _bgemv(X, W, Y, H, M, N, stride_xb, stride_xh, stride_xm, stride_wb, stride_wh, BLOCK_M: tl.constexpr,
           BLOCK_N: tl.constexpr):
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    X += b * stride_xb + h * stride_xh
    W += b * stride_wb + h * stride_wh
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(X + rows[:, None] * stride_xm + cols[None, :])
        w = tl.load(W + cols)
        acc += tl.sum(x * w[None, :], axis=1)
    tl.store(Y + bh * M + rows, acc)

@tad.autodiff(grad_inputs=("x", "w"))
def bgemv(x, w):
    B, H, M, N = x.shape
    y = torch.empty(B, H, M, dtype=x.dtype, device=x.device)
    _bgemv[(M // 4, B * H)](x, w, y, H, M, N, x.stride(0), x.stride(1), x.stride(2), w.stride(0), w.stride(1),
                            BLOCK_M=4, BLOCK_N=8)
    return y

SWEEP = [{"B": 2, "H": 3, "M": 12, "N": 24}, {"B": 1, "H": 2, "M": 8, "N": 8}]
def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    B, H, M, N = dims["B"], dims["H"], dims["M"], dims["N"]
    return (torch.randn(B, H, M, N, device=dev, dtype=dt), torch.randn(B, H, N, device=dev, dtype=dt)), {}

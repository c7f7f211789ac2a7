"""RMSNorm over the last dim: one program per row; saves rstd for a backward."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _rmsnorm_fwd(X, W, Y, Rstd, stride_x, stride_y, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    # Masked lanes load 0, so they add nothing to the sum of squares.
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    tl.store(Rstd + row, rstd)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * rstd * w
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x", "weight"))
def rmsnorm(x, weight, eps=1e-6):
    M, N = x.shape
    y = torch.empty_like(x)
    rstd = torch.empty(M, dtype=torch.float32, device=x.device)
    block = triton.next_power_of_2(N)
    num_warps = min(max(block // 256, 1), 8)
    _rmsnorm_fwd[(M,)](x, weight, y, rstd, x.stride(0), y.stride(0), N, eps,
                       BLOCK_SIZE=block, num_warps=num_warps)
    return y


SWEEP = [
    {"M": 4, "N": 48},
    {"M": 20, "N": 1000},
    {"M": 4096, "N": 1024},
    {"M": 4096, "N": 4096},
    {"M": 8192, "N": 8192, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N = dims["M"], dims["N"]
    x = torch.randn(M, N, dtype=dtype, device=device)
    weight = 1.0 + 0.1 * torch.randn(N, dtype=dtype, device=device)
    return (x, weight), {"eps": 1e-6}


def reference(x, weight, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    M, N = dims["M"], dims["N"]
    # fwd reads x and w, writes y; bwd reads x, w and dy, writes dx and dw.
    return (2 * M * N + N) * item if mode == "fwd" else (3 * M * N + 2 * N) * item

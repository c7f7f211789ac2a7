"""A weight-normalised linear layer: W = g * V / |V| row by row (V [N, K], g [N]), then
y = x W^T + bias for x [M, K]. Two launches: the first writes W into a float32 buffer the stub
allocates, the second is a tiled matmul that reads it, so the gradients of V and g flow through
both."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _weight_norm_rows(V, G, Wn, N, K, stride_v, stride_w, BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_K)
    mask = cols < K
    v = tl.load(V + row * stride_v + cols, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(G + row).to(tl.float32)
    scale = g / tl.sqrt(tl.sum(v * v, axis=0))
    tl.store(Wn + row * stride_w + cols, v * scale, mask=mask)


@triton.jit
def _linear_bias_fwd(X, Wn, Bias, Y, M, N, K, stride_xm, stride_wn, stride_ym,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        x = tl.load(X + rm[:, None] * stride_xm + ks[None, :],
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        # W^T's tile read straight from W's rows: element (k, n) is Wn[n, k].
        w = tl.load(Wn + rn[None, :] * stride_wn + ks[:, None],
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x.to(tl.float32), w, acc)
    bias = tl.load(Bias + rn, mask=rn < N, other=0.0).to(tl.float32)
    acc += bias[None, :]
    tl.store(Y + rm[:, None] * stride_ym + rn[None, :], acc.to(Y.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@tad.autodiff(grad_inputs=("x", "v", "g", "bias"))
def weight_norm_linear(x, v, g, bias):
    M, K = x.shape
    N = v.shape[0]
    w = torch.empty(N, K, dtype=torch.float32, device=x.device)
    y = torch.empty(M, N, dtype=x.dtype, device=x.device)
    _weight_norm_rows[(N,)](v, g, w, N, K, v.stride(0), w.stride(0),
                            BLOCK_K=triton.next_power_of_2(K))
    block = 32 if min(M, N) < 1024 else 64
    grid = (triton.cdiv(M, block), triton.cdiv(N, block))
    _linear_bias_fwd[grid](x, w, bias, y, M, N, K, x.stride(0), w.stride(0), y.stride(0),
                           BLOCK_M=block, BLOCK_N=block, BLOCK_K=32)
    return y


SWEEP = [
    {"M": 37, "N": 29, "K": 50},
    {"M": 20, "N": 48, "K": 70},
    {"M": 4096, "N": 1024, "K": 1024},
    {"M": 8192, "N": 4096, "K": 1024},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N, K = dims["M"], dims["N"], dims["K"]
    x = torch.randn(M, K, dtype=dtype, device=device)
    v = torch.randn(N, K, dtype=dtype, device=device)
    g = 1.0 + 0.1 * torch.randn(N, dtype=dtype, device=device)
    bias = 0.1 * torch.randn(N, dtype=dtype, device=device)
    return (x, v, g, bias), {}


def reference(x, v, g, bias):
    w = g[:, None] * v / v.norm(dim=1, keepdim=True)
    return x @ w.t() + bias


def flops(dims, mode):
    f = 2 * dims["M"] * dims["N"] * dims["K"]
    return f if mode == "fwd" else 2 * f

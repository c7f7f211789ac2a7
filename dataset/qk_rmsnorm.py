"""Per-head RMSNorm of queries and keys (QK-norm, as in OLMo-2 / Qwen-3 attention) before rotary
embedding: each head vector of q [B, N, H, D] and k [B, N, HKV, D] is normalised over D and scaled
by its own weight [D]. One kernel, launched once for q and once for k.

A 3-D grid: token blocks, heads, batch; each program normalises BLOCK_T head vectors of one head.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _head_rmsnorm_fwd(X, W, Y, N, D, stride_b, stride_n, stride_h, eps, BLOCK_T: tl.constexpr,
                      BLOCK_D: tl.constexpr):
    toks = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    head = tl.program_id(1)
    batch = tl.program_id(2)
    dims = tl.arange(0, BLOCK_D)
    mask = (toks[:, None] < N) & (dims[None, :] < D)
    offs = batch.to(tl.int64) * stride_b + head * stride_h + toks[:, None] * stride_n + dims[None, :]
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + dims, mask=dims < D, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=1) / D + eps)
    tl.store(Y + offs, (x * rstd[:, None] * w[None, :]).to(Y.dtype.element_ty), mask=mask)


def _head_rmsnorm(x, w, eps):
    B, N, H, D = x.shape
    y = torch.empty_like(x)
    block_t = 16
    # y is allocated like x, so x's strides address both.
    _head_rmsnorm_fwd[(triton.cdiv(N, block_t), H, B)](x, w, y, N, D, x.stride(0), x.stride(1),
                                                       x.stride(2), eps, BLOCK_T=block_t,
                                                       BLOCK_D=triton.next_power_of_2(D))
    return y


@tad.autodiff(grad_inputs=("q", "k", "q_weight", "k_weight"))
def qk_rmsnorm(q, k, q_weight, k_weight, eps=1e-6):
    return _head_rmsnorm(q, q_weight, eps), _head_rmsnorm(k, k_weight, eps)


SWEEP = [
    {"B": 2, "N": 19, "H": 4, "HKV": 2, "D": 24},
    {"B": 1, "N": 40, "H": 3, "HKV": 1, "D": 64},
    {"B": 8, "N": 4096, "H": 32, "HKV": 8, "D": 128},
    {"B": 4, "N": 8192, "H": 16, "HKV": 16, "D": 64},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    B, N, H, HKV, D = dims["B"], dims["N"], dims["H"], dims["HKV"], dims["D"]
    q = torch.randn(B, N, H, D, dtype=dtype, device=device)
    k = torch.randn(B, N, HKV, D, dtype=dtype, device=device)
    q_weight = 1.0 + 0.1 * torch.randn(D, dtype=dtype, device=device)
    k_weight = 1.0 + 0.1 * torch.randn(D, dtype=dtype, device=device)
    return (q, k, q_weight, k_weight), {"eps": 1e-6}


def reference(q, k, q_weight, k_weight, eps=1e-6):
    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w
    return rms(q, q_weight), rms(k, k_weight)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["B"] * dims["N"] * (dims["H"] + dims["HKV"]) * dims["D"]
    # fwd: q, k in and out; bwd: q, k, dq_out, dk_out in, dq, dk out.
    return n * item * (2 if mode == "fwd" else 3)

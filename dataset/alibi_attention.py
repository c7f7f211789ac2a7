"""Causal attention with ALiBi position biases for short sequences, the whole key row in one
block: s_ij = scale * q_i . k_j - slope_h * (i - j) for j <= i, p = softmax_j(s), o = p v.
q, k, v [B, H, N, D]; head h's slope is 2^(-8 (h + 1) / H).

A 3-D grid: query blocks on axis 0, heads on axis 1, batch on axis 2.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _alibi_attention_fwd(Q, K, V, O, sm_scale, stride_b, stride_h, stride_n, H, N, D,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_m = tl.program_id(0)
    head = tl.program_id(1)
    batch = tl.program_id(2)
    base = batch.to(tl.int64) * stride_b + head * stride_h
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    keys = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, BLOCK_D)
    row_mask = (rows[:, None] < N) & (dims[None, :] < D)
    key_mask = (keys[:, None] < N) & (dims[None, :] < D)
    q = tl.load(Q + base + rows[:, None] * stride_n + dims[None, :], mask=row_mask, other=0.0)
    k = tl.load(K + base + keys[:, None] * stride_n + dims[None, :], mask=key_mask, other=0.0)
    v = tl.load(V + base + keys[:, None] * stride_n + dims[None, :], mask=key_mask, other=0.0)
    slope = tl.exp2(-8.0 * (head + 1) / H)
    distance = (rows[:, None] - keys[None, :]).to(tl.float32)
    s = tl.dot(q, tl.trans(k)) * sm_scale - slope * distance
    # Key 0 is always visible, so every row keeps a finite maximum.
    s = tl.where((keys[None, :] <= rows[:, None]) & (keys[None, :] < N), s, float("-inf"))
    s_max = tl.max(s, axis=1)
    p = tl.exp(s - s_max[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    o = tl.dot(p.to(v.dtype), v)
    tl.store(O + base + rows[:, None] * stride_n + dims[None, :], o.to(O.dtype.element_ty),
             mask=row_mask)


@tad.autodiff(grad_inputs=("q", "k", "v"))
def alibi_attention(q, k, v):
    B, H, N, D = q.shape
    o = torch.empty_like(q)
    block_m = 16
    grid = (triton.cdiv(N, block_m), H, B)
    # q, k, v and o share one contiguous layout.
    _alibi_attention_fwd[grid](q, k, v, o, D ** -0.5, q.stride(0), q.stride(1), q.stride(2), H, N,
                               D, BLOCK_M=block_m, BLOCK_N=max(triton.next_power_of_2(N), 16),
                               BLOCK_D=max(triton.next_power_of_2(D), 16))
    return o


SWEEP = [
    {"B": 1, "H": 2, "N": 21, "D": 16},
    {"B": 2, "H": 3, "N": 40, "D": 24},
    {"B": 8, "H": 16, "N": 256, "D": 64},
    {"B": 32, "H": 16, "N": 128, "D": 64},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    shape = (dims["B"], dims["H"], dims["N"], dims["D"])
    q, k, v = (torch.randn(shape, dtype=dtype, device=device) for _ in range(3))
    return (q, k, v), {}


def reference(q, k, v):
    B, H, N, D = q.shape
    slopes = 2.0 ** (-8.0 * torch.arange(1, H + 1, dtype=torch.float64, device=q.device) / H)
    pos = torch.arange(N, device=q.device)
    distance = (pos[:, None] - pos[None, :]).to(torch.float64)
    s = q @ k.transpose(-1, -2) * D ** -0.5 - (slopes[:, None, None] * distance).to(q.dtype)
    s = s.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def flops(dims, mode):
    f = 4 * dims["B"] * dims["H"] * dims["N"] * dims["N"] * dims["D"]
    return f if mode == "fwd" else 2 * f

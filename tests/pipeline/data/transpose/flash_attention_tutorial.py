"""Causal attention written the way the Triton tutorial splits it: the key loop runs in two stages,
the blocks strictly below the diagonal without a mask, then the diagonal block with one. Saves the
base-2 logsumexp M [B*H, N]. N must be a multiple of BLOCK_M (no row masks, as the tutorial)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _inner(acc, l_i, m_i, q, K, V, start_m, qk_scale, offs_m, offs_n, offs_d, stride_kn,
           stride_vn, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N
    for start_n in range(lo, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None])
        qk = tl.dot(q, k)
        if STAGE == 2:
            keep = offs_m[:, None] >= cols[None, :]
            qk = qk * qk_scale + tl.where(keep, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, O, M, sm_scale, stride_b, stride_h, stride_n, H, N,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              STAGE: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    base = off_z.to(tl.int64) * stride_b + off_h.to(tl.int64) * stride_h
    Q += base
    K += base
    V += base
    O += base
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = tl.load(Q + offs_m[:, None] * stride_n + offs_d[None, :])
    if STAGE & 1:
        acc, l_i, m_i = _inner(acc, l_i, m_i, q, K, V, start_m, qk_scale, offs_m, offs_n, offs_d,
                               stride_n, stride_n, N, BLOCK_M, BLOCK_N, 4 - STAGE)
    if STAGE & 2:
        acc, l_i, m_i = _inner(acc, l_i, m_i, q, K, V, start_m, qk_scale, offs_m, offs_n, offs_d,
                               stride_n, stride_n, N, BLOCK_M, BLOCK_N, 2)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N + offs_m, m_i)
    tl.store(O + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(O.dtype.element_ty))


@tad.autodiff(grad_inputs=("q", "k", "v"))
def attention(q, k, v, sm_scale, causal=True):
    B, H, N, D = q.shape
    o = torch.empty_like(q)
    m = torch.empty(B * H, N, dtype=torch.float32, device=q.device)
    block_m, block_n = (16, 8) if N < 1024 else (128, 64)
    grid = (triton.cdiv(N, block_m), B * H)
    _attn_fwd[grid](q, k, v, o, m, sm_scale, q.stride(0), q.stride(1), q.stride(2), H, N,
                    HEAD_DIM=D, BLOCK_M=block_m, BLOCK_N=block_n, STAGE=3 if causal else 1,
                    num_warps=4, num_stages=3)
    return o


SWEEP = [
    {"B": 1, "H": 2, "N": 48, "D": 16, "causal": True},
    {"B": 2, "H": 1, "N": 32, "D": 16, "causal": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    shape = (dims["B"], dims["H"], dims["N"], dims["D"])
    q, k, v = (torch.randn(shape, dtype=dtype, device=device) for _ in range(3))
    return (q, k, v), {"sm_scale": dims["D"] ** -0.5, "causal": dims.get("causal", True)}


def reference(q, k, v, sm_scale, causal=True):
    s = (q @ k.transpose(-1, -2)) * sm_scale
    if causal:
        n = q.shape[-2]
        future = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(future, float("-inf"))
    return torch.softmax(s, dim=-1) @ v

"""Causal attention in the style of the current Triton tutorial: Q, K, V and O through device-side
tensor descriptors over the [B*H*N, D] view, the key loop in two stages (below the diagonal, then
the diagonal block), the K/V row offsets carried and advanced by BLOCK_N each iteration, the
base-2 logsumexp saved to M. N must be a multiple of BLOCK_M."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m, qk_scale, offs_m, offs_n, N,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N
    offsetk_y = offset_y + lo
    offsetv_y = offset_y + lo
    for start_n in tl.range(lo, hi, BLOCK_N):
        k = desc_k.load([offsetk_y, 0]).T
        qk = tl.dot(q, k)
        if STAGE == 2:
            keep = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(keep, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([offsetv_y, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
        offsetk_y += BLOCK_N
        offsetv_y += BLOCK_N
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, O, M, sm_scale, Z, H, N, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    rows = Z * H * N
    desc_q = tl.make_tensor_descriptor(Q, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    desc_k = tl.make_tensor_descriptor(K, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    desc_v = tl.make_tensor_descriptor(V, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    desc_o = tl.make_tensor_descriptor(O, shape=[rows, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    offset_y = off_hz * N
    qo_offset_y = offset_y + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([qo_offset_y, 0])
    if STAGE & 1:
        acc, l_i, m_i = _inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m, qk_scale, offs_m,
                               offs_n, N, BLOCK_M, BLOCK_N, 4 - STAGE)
    if STAGE & 2:
        acc, l_i, m_i = _inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m, qk_scale, offs_m,
                               offs_n, N, BLOCK_M, BLOCK_N, 2)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N + offs_m, m_i)
    desc_o.store([qo_offset_y, 0], acc.to(desc_o.dtype))


def _descriptor_scratch(size, alignment, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


@tad.autodiff(grad_inputs=("q", "k", "v"))
def attention(q, k, v, sm_scale, causal=True):
    B, H, N, D = q.shape
    assert q.is_contiguous() and k.is_contiguous() and v.is_contiguous()
    o = torch.empty_like(q)
    m = torch.empty(B * H, N, dtype=torch.float32, device=q.device)
    triton.set_allocator(_descriptor_scratch)
    block_m, block_n = (16, 8) if N < 1024 else (128, 64)
    grid = (triton.cdiv(N, block_m), B * H)
    _attn_fwd[grid](q, k, v, o, m, sm_scale, B, H, N, HEAD_DIM=D, BLOCK_M=block_m, BLOCK_N=block_n,
                    STAGE=3 if causal else 1, num_warps=4, num_stages=3)
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

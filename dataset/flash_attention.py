"""FlashAttention-2 forward for q, k, v [B, H, N, D], optionally causal.

Each program owns BLOCK_M query rows of one (batch, head) and streams K/V blocks through an online
softmax in base 2; it writes O and saves the natural-log logsumexp L [B, H, N] of the scaled
scores for a backward.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _attn_fwd(Q, K, V, O, L, sm_scale, stride_qb, stride_qh, stride_qn, stride_kb, stride_kh,
              stride_kn, stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_on, H, N,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    off_b = (off_bh // H).to(tl.int64)
    off_h = (off_bh % H).to(tl.int64)
    Q += off_b * stride_qb + off_h * stride_qh
    K += off_b * stride_kb + off_h * stride_kh
    V += off_b * stride_vb + off_h * stride_vh
    O += off_b * stride_ob + off_h * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offs_m[:, None] * stride_qn + offs_d[None, :], mask=offs_m[:, None] < N,
                other=0.0)
    # Scores are kept in log2 units so the exponentials are exp2.
    qk_scale = sm_scale * 1.4426950408889634
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    # Causal rows never look past their own block, so later K/V blocks are skipped entirely.
    hi = N
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, N)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        # K is loaded transposed, [HEAD_DIM, BLOCK_N], to feed tl.dot directly.
        k = tl.load(K + cols[None, :] * stride_kn + offs_d[:, None], mask=cols[None, :] < N,
                    other=0.0)
        qk = tl.dot(q, k)
        valid = cols[None, :] < N
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(valid, qk * qk_scale, float("-inf"))
        # Column 0 is valid for every row, so m_new is finite from the first block on.
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.exp2(qk - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(V + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < N,
                    other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    row_ok = offs_m < N
    # Back from log2 to natural-log units.
    tl.store(L + off_bh.to(tl.int64) * N + offs_m, (m_i + tl.log2(l_i)) * 0.6931471805599453,
             mask=row_ok)
    tl.store(O + offs_m[:, None] * stride_on + offs_d[None, :], acc.to(O.dtype.element_ty),
             mask=row_ok[:, None])


@tad.autodiff(grad_inputs=("q", "k", "v"))
def flash_attention(q, k, v, sm_scale, causal=False):
    B, H, N, D = q.shape
    o = torch.empty_like(q)
    lse = torch.empty(B, H, N, dtype=torch.float32, device=q.device)
    # Short sequences get small tiles so that they still span several K/V blocks; fp32 tiles are
    # halved so that the pipelined K/V buffers still fit in shared memory.
    if N < 1024:
        block_m, block_n = 32, 16
    else:
        block_m, block_n = (128, 64) if q.element_size() <= 2 else (64, 32)
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_M"]), B * H)
    _attn_fwd[grid](q, k, v, o, lse, sm_scale, q.stride(0), q.stride(1), q.stride(2),
                    k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2),
                    o.stride(0), o.stride(1), o.stride(2), H, N, HEAD_DIM=D, BLOCK_M=block_m,
                    BLOCK_N=block_n, CAUSAL=causal, num_warps=4 if D <= 64 else 8, num_stages=3)
    return o


SWEEP = [
    {"B": 1, "H": 2, "N": 40, "D": 16, "causal": False},
    {"B": 2, "H": 2, "N": 80, "D": 32, "causal": True},
    {"B": 4, "H": 16, "N": 1024, "D": 64, "causal": False},
    {"B": 4, "H": 16, "N": 1024, "D": 64, "causal": True},
    # Head dim 128 at the long-sequence tiles: the backward needs fewer pipeline stages to fit.
    {"B": 1, "H": 4, "N": 1024, "D": 128, "causal": True},
    # Optional: the float64 reference's attention matrix alone is 17 GB here.
    {"B": 4, "H": 32, "N": 4096, "D": 128, "causal": False, "required": False},
    {"B": 4, "H": 32, "N": 4096, "D": 128, "causal": True, "required": False},
    {"B": 2, "H": 32, "N": 16384, "D": 128, "causal": True, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    shape = (dims["B"], dims["H"], dims["N"], dims["D"])
    q, k, v = (torch.randn(shape, dtype=dtype, device=device) for _ in range(3))
    return (q, k, v), {"sm_scale": dims["D"] ** -0.5, "causal": dims.get("causal", False)}


def reference(q, k, v, sm_scale, causal=False):
    s = (q @ k.transpose(-1, -2)) * sm_scale
    if causal:
        n = q.shape[-2]
        future = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(future, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def flops(dims, mode):
    f = 4 * dims["B"] * dims["H"] * dims["N"] ** 2 * dims["D"]
    # A causal mask does half the work.
    if dims.get("causal", False):
        f //= 2
    return f if mode == "fwd" else f * 5 // 2

"""FlashAttention-2 style forward and backward for q, k, v [B, H, N, D], optionally causal.

Forward: each program owns BLOCK_M query rows of one (batch, head) and streams key blocks through
an online softmax (base 2); it stores O and the natural-log logsumexp lse [B, H, N] of the scaled
scores. Backward, with S = q k^T * scale, P = exp(S - lse), O = P v:
    Delta = rowsum(dO * O)                      (a preprocess kernel)
    dV = P^T dO,  dP = dO v^T,  dS = P * (dP - Delta)
    dK = dS^T q * scale  (a kernel over key blocks looping over query blocks)
    dQ = dS k * scale    (a kernel over query blocks looping over key blocks)
P is recomputed per tile from the saved lse; no program writes what another writes, so there are
no atomics. With a causal mask a key block starts its loop at the query block holding its first
key, and a query block stops at the key block holding its last query.
Tensors are taken contiguous ([B, H, N, D] row-major), as the suite's make_args gives them.
"""
import torch
import triton
import triton.language as tl

from ._common import nbytes

GRAD_INPUTS = ("q", "k", "v")
LOG2E = 1.4426950408889634


@triton.jit
def _attn_fwd(Q, K, V, O, L, qk_scale, N, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * N * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < N
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=row_ok[:, None],
                other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    hi = N
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, N)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        col_ok = cols < N
        k = tl.load(K + base + cols[:, None] * HEAD_DIM + offs_d[None, :], mask=col_ok[:, None],
                    other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        valid = col_ok[None, :]
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        s = tl.where(valid, s, float("-inf"))
        # Key 0 is valid for every row, so m_new is finite from the first block on.
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(V + base + cols[:, None] * HEAD_DIM + offs_d[None, :], mask=col_ok[:, None],
                    other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(L + bh * N + offs_m, (m_i + tl.log2(l_i)) * 0.6931471805599453, mask=row_ok)
    tl.store(O + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(O.dtype.element_ty),
             mask=row_ok[:, None])


@triton.jit
def _attn_bwd_delta(O, DO, Delta, N, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    bh = tl.program_id(1).to(tl.int64)
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < N
    ptrs = bh * N * HEAD_DIM + offs_m[:, None] * HEAD_DIM + offs_d[None, :]
    o = tl.load(O + ptrs, mask=row_ok[:, None], other=0.0).to(tl.float32)
    do = tl.load(DO + ptrs, mask=row_ok[:, None], other=0.0).to(tl.float32)
    tl.store(Delta + bh * N + offs_m, tl.sum(o * do, axis=1), mask=row_ok)


@triton.jit
def _attn_bwd_dkdv(Q, K, V, DO, L, Delta, DK, DV, sm_scale, qk_scale, N, HEAD_DIM: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_n = tl.program_id(0) * BLOCK_N
    bh = tl.program_id(1).to(tl.int64)
    base = bh * N * HEAD_DIM
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    col_ok = offs_n < N
    kv_ptrs = base + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    k = tl.load(K + kv_ptrs, mask=col_ok[:, None], other=0.0)
    v = tl.load(V + kv_ptrs, mask=col_ok[:, None], other=0.0)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    lo = 0
    if CAUSAL:
        # Query rows before start_n see none of these keys.
        lo = (start_n // BLOCK_M) * BLOCK_M
    for start_m in range(lo, N, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        row_ok = offs_m < N
        q_ptrs = base + offs_m[:, None] * HEAD_DIM + offs_d[None, :]
        q = tl.load(Q + q_ptrs, mask=row_ok[:, None], other=0.0)
        do = tl.load(DO + q_ptrs, mask=row_ok[:, None], other=0.0)
        lse2 = tl.load(L + bh * N + offs_m, mask=row_ok, other=0.0) * 1.4426950408889634
        delta = tl.load(Delta + bh * N + offs_m, mask=row_ok, other=0.0)
        # Transposed tiles [BLOCK_N, BLOCK_M]: key j, query i.
        s_t = tl.dot(k, tl.trans(q)) * qk_scale
        valid = col_ok[:, None] & row_ok[None, :]
        if CAUSAL:
            valid = valid & (offs_m[None, :] >= offs_n[:, None])
        p_t = tl.where(valid, tl.exp2(s_t - lse2[None, :]), 0.0)
        dv += tl.dot(p_t.to(do.dtype), do)
        dp_t = tl.dot(v, tl.trans(do))
        ds_t = p_t * (dp_t - delta[None, :])
        dk += tl.dot(ds_t.to(q.dtype), q)
    tl.store(DK + kv_ptrs, (dk * sm_scale).to(DK.dtype.element_ty), mask=col_ok[:, None])
    tl.store(DV + kv_ptrs, dv.to(DV.dtype.element_ty), mask=col_ok[:, None])


@triton.jit
def _attn_bwd_dq(Q, K, V, DO, L, Delta, DQ, sm_scale, qk_scale, N, HEAD_DIM: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * N * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < N
    q_ptrs = base + offs_m[:, None] * HEAD_DIM + offs_d[None, :]
    q = tl.load(Q + q_ptrs, mask=row_ok[:, None], other=0.0)
    do = tl.load(DO + q_ptrs, mask=row_ok[:, None], other=0.0)
    lse2 = tl.load(L + bh * N + offs_m, mask=row_ok, other=0.0) * 1.4426950408889634
    delta = tl.load(Delta + bh * N + offs_m, mask=row_ok, other=0.0)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    hi = N
    if CAUSAL:
        # Keys past this block's last query are masked for all of its rows.
        hi = tl.minimum((start_m + 1) * BLOCK_M, N)
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        col_ok = offs_n < N
        kv_ptrs = base + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
        k = tl.load(K + kv_ptrs, mask=col_ok[:, None], other=0.0)
        v = tl.load(V + kv_ptrs, mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        valid = row_ok[:, None] & col_ok[None, :]
        if CAUSAL:
            valid = valid & (offs_m[:, None] >= offs_n[None, :])
        p = tl.where(valid, tl.exp2(s - lse2[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k)
    tl.store(DQ + q_ptrs, (dq * sm_scale).to(DQ.dtype.element_ty), mask=row_ok[:, None])


def _blocks(q):
    """(forward BLOCK_M, BLOCK_N, warps, stages), (dK/dV BLOCK_M, BLOCK_N), (dQ BLOCK_M, BLOCK_N),
    backward warps and stages; fp32 and D=128 tiles are smaller so that the pipelined tiles fit
    in shared memory."""
    D = q.shape[-1]
    wide = q.element_size() > 2 or D > 64
    fwd = (128, 64, 4 if D <= 64 else 8, 3)
    bwd = dict(dkdv=(64, 128), dq=(128, 64), warps=8, stages=2 if wide else 3)
    if q.element_size() > 2:
        fwd = (64, 32, 4, 2)
        bwd = dict(dkdv=(32, 64), dq=(64, 32), warps=4, stages=2)
    return fwd, bwd


def forward(q, k, v, sm_scale, causal=False):
    """O and the natural-log lse [B, H, N] (float32)."""
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    B, H, N, D = q.shape
    o = torch.empty_like(q)
    lse = torch.empty(B, H, N, dtype=torch.float32, device=q.device)
    (bm, bn, warps, stages), _ = _blocks(q)
    _attn_fwd[(triton.cdiv(N, bm), B * H)](q, k, v, o, lse, sm_scale * LOG2E, N, HEAD_DIM=D,
                                           BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal,
                                           num_warps=warps, num_stages=stages)
    return o, lse


def save(q, k, v, sm_scale, causal=False):
    return forward(q, k, v, sm_scale, causal)


def backward(q, k, v, sm_scale, causal=False, *, grad_out, saved=None):
    o, lse = saved if saved is not None else save(q, k, v, sm_scale, causal)
    q, k, v, do = q.contiguous(), k.contiguous(), v.contiguous(), grad_out.contiguous()
    B, H, N, D = q.shape
    _, cfg = _blocks(q)
    delta = torch.empty(B, H, N, dtype=torch.float32, device=q.device)
    _attn_bwd_delta[(triton.cdiv(N, 64), B * H)](o, do, delta, N, HEAD_DIM=D, BLOCK_M=64,
                                                 num_warps=4)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    bm, bn = cfg["dkdv"]
    _attn_bwd_dkdv[(triton.cdiv(N, bn), B * H)](q, k, v, do, lse, delta, dk, dv, sm_scale,
                                                sm_scale * LOG2E, N, HEAD_DIM=D, BLOCK_M=bm,
                                                BLOCK_N=bn, CAUSAL=causal,
                                                num_warps=cfg["warps"], num_stages=cfg["stages"])
    bm, bn = cfg["dq"]
    _attn_bwd_dq[(triton.cdiv(N, bm), B * H)](q, k, v, do, lse, delta, dq, sm_scale,
                                              sm_scale * LOG2E, N, HEAD_DIM=D, BLOCK_M=bm,
                                              BLOCK_N=bn, CAUSAL=causal, num_warps=cfg["warps"],
                                              num_stages=cfg["stages"])
    return dq, dk, dv


def min_bytes(q, k, v, sm_scale, causal=False):
    # Reads q, k, v, O, dO and lse; writes dq, dk, dv.
    B, H, N, _ = q.shape
    return 8 * nbytes(q) + B * H * N * 4

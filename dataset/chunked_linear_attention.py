"""Causal linear attention o_t = scale * sum_{s <= t} (q_t . k_s) v_s, computed by chunks as
linear-attention libraries do, in two launches:

  states  (grid B*H):          walks the chunks in order and stores the state entering each chunk,
                               S_c = sum over earlier chunks of k^T v ([DK, DV], float32), then
                               adds its own chunk's k^T v;
  outputs (grid NC x H x B):   o_c = scale * (q_c S_c + tril(q_c k_c^T) v_c), the inter-chunk part
                               from the saved state, the intra-chunk part causal-masked.

q, k [B, H, T, DK], v [B, H, T, DV]; the last chunk may be partial.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _chunk_states(K, V, States, T, DK, DV, stride_kbh, stride_kt, stride_vbh, stride_vt,
                  num_chunks, CHUNK: tl.constexpr, BLOCK_DK: tl.constexpr,
                  BLOCK_DV: tl.constexpr):
    bh = tl.program_id(0)
    ts = tl.arange(0, CHUNK)
    dk = tl.arange(0, BLOCK_DK)
    dv = tl.arange(0, BLOCK_DV)
    state_ptrs = (States + bh.to(tl.int64) * num_chunks * BLOCK_DK * BLOCK_DV
                  + dk[:, None] * BLOCK_DV + dv[None, :])
    s = tl.zeros([BLOCK_DK, BLOCK_DV], dtype=tl.float32)
    for c in range(0, num_chunks):
        tl.store(state_ptrs + c * BLOCK_DK * BLOCK_DV, s)
        rows = c * CHUNK + ts
        k = tl.load(K + bh * stride_kbh + rows[:, None] * stride_kt + dk[None, :],
                    mask=(rows[:, None] < T) & (dk[None, :] < DK), other=0.0)
        v = tl.load(V + bh * stride_vbh + rows[:, None] * stride_vt + dv[None, :],
                    mask=(rows[:, None] < T) & (dv[None, :] < DV), other=0.0)
        s += tl.dot(tl.trans(k), v)


@triton.jit
def _chunk_outputs(Q, K, V, States, O, scale, T, DK, DV, H, stride_qbh, stride_qt, stride_kbh,
                   stride_kt, stride_vbh, stride_vt, stride_obh, stride_ot, num_chunks,
                   CHUNK: tl.constexpr, BLOCK_DK: tl.constexpr, BLOCK_DV: tl.constexpr):
    c = tl.program_id(0)
    bh = tl.program_id(2) * H + tl.program_id(1)
    rows = c * CHUNK + tl.arange(0, CHUNK)
    dk = tl.arange(0, BLOCK_DK)
    dv = tl.arange(0, BLOCK_DV)
    k_mask = (rows[:, None] < T) & (dk[None, :] < DK)
    v_mask = (rows[:, None] < T) & (dv[None, :] < DV)
    q = tl.load(Q + bh * stride_qbh + rows[:, None] * stride_qt + dk[None, :], mask=k_mask,
                other=0.0)
    k = tl.load(K + bh * stride_kbh + rows[:, None] * stride_kt + dk[None, :], mask=k_mask,
                other=0.0)
    v = tl.load(V + bh * stride_vbh + rows[:, None] * stride_vt + dv[None, :], mask=v_mask,
                other=0.0)
    s = tl.load(States + (bh.to(tl.int64) * num_chunks + c) * BLOCK_DK * BLOCK_DV
                + dk[:, None] * BLOCK_DV + dv[None, :])
    o = tl.dot(q, s.to(q.dtype))
    scores = tl.dot(q, tl.trans(k))
    causal = rows[None, :] <= rows[:, None]
    o = tl.dot(tl.where(causal, scores, 0.0).to(v.dtype), v, o)
    tl.store(O + bh * stride_obh + rows[:, None] * stride_ot + dv[None, :],
             (o * scale).to(O.dtype.element_ty), mask=v_mask)


@tad.autodiff(grad_inputs=("q", "k", "v"))
def chunked_linear_attention(q, k, v, chunk=16):
    B, H, T, DK = q.shape
    DV = v.shape[-1]
    num_chunks = triton.cdiv(T, chunk)
    block_dk = max(triton.next_power_of_2(DK), 16)
    block_dv = max(triton.next_power_of_2(DV), 16)
    states = torch.empty(B * H, num_chunks, block_dk, block_dv, dtype=torch.float32,
                         device=q.device)
    o = torch.empty(B, H, T, DV, dtype=q.dtype, device=q.device)
    # Contiguous [B, H, T, D] tensors: (b, h) flattens to one index with stride(1).
    _chunk_states[(B * H,)](k, v, states, T, DK, DV, k.stride(1), k.stride(2), v.stride(1),
                            v.stride(2), num_chunks, CHUNK=chunk, BLOCK_DK=block_dk,
                            BLOCK_DV=block_dv)
    _chunk_outputs[(num_chunks, H, B)](q, k, v, states, o, DK ** -0.5, T, DK, DV, H, q.stride(1),
                                       q.stride(2), k.stride(1), k.stride(2), v.stride(1),
                                       v.stride(2), o.stride(1), o.stride(2), num_chunks,
                                       CHUNK=chunk, BLOCK_DK=block_dk, BLOCK_DV=block_dv)
    return o


SWEEP = [
    {"B": 1, "H": 2, "T": 40, "DK": 16, "DV": 24, "chunk": 16},
    {"B": 2, "H": 1, "T": 50, "DK": 20, "DV": 16, "chunk": 16},
    {"B": 4, "H": 16, "T": 4096, "DK": 64, "DV": 64, "chunk": 64},
    {"B": 8, "H": 8, "T": 2048, "DK": 128, "DV": 128, "chunk": 64},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    B, H, T, DK, DV = dims["B"], dims["H"], dims["T"], dims["DK"], dims["DV"]
    # Keys scaled down so that sums over long sequences stay in float16's range.
    q = torch.randn(B, H, T, DK, dtype=dtype, device=device)
    k = (torch.randn(B, H, T, DK, device=device) / T ** 0.5).to(dtype)
    v = torch.randn(B, H, T, DV, dtype=dtype, device=device)
    return (q, k, v), {"chunk": dims.get("chunk", 16)}


def reference(q, k, v, chunk=16):
    T = q.shape[2]
    scores = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5
    causal = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    return scores.masked_fill(~causal, 0.0) @ v


def flops(dims, mode):
    B, H, T, DK, DV, c = dims["B"], dims["H"], dims["T"], dims["DK"], dims["DV"], dims["chunk"]
    # per chunk: k^T v, q S, q k^T, (q k^T) v.
    f = 2 * B * H * T * (2 * DK * DV + c * DK + c * DV)
    return f if mode == "fwd" else 2 * f

"""Attention of one query per sequence over a long key cache (decoding), split over the keys as
flash-decoding does, in two launches:

  partial (grid splits x H x B): each program walks its SPLIT_LEN keys in BLOCK_N blocks with an
          online softmax and stores its normalised output o_s [D] and logsumexp lse_s;
  combine (grid H x B):          o = sum_s exp(lse_s - lse) o_s, lse = logsumexp_s lse_s.

q [B, H, D], k, v [B, H, N, D]; the last split and the last block of a split may be partial.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _decode_partial(Q, K, V, PartO, PartLse, sm_scale, N, D, H, split_len, num_splits,
                    stride_qb, stride_qh, stride_kb, stride_kh, stride_kn, BLOCK_N: tl.constexpr,
                    BLOCK_D: tl.constexpr):
    split = tl.program_id(0)
    h = tl.program_id(1)
    b = tl.program_id(2)
    dims = tl.arange(0, BLOCK_D)
    d_ok = dims < D
    q = tl.load(Q + b * stride_qb + h * stride_qh + dims, mask=d_ok, other=0.0).to(tl.float32)
    kv_base = b.to(tl.int64) * stride_kb + h * stride_kh
    lo = split * split_len
    hi = tl.minimum(lo + split_len, N)
    m = float("-inf")
    l = 0.0
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for start in range(lo, hi, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k_ok = keys < hi
        mask = k_ok[:, None] & d_ok[None, :]
        offs = kv_base + keys[:, None] * stride_kn + dims[None, :]
        k = tl.load(K + offs, mask=mask, other=0.0).to(tl.float32)
        s = tl.sum(q[None, :] * k, axis=1) * sm_scale
        s = tl.where(k_ok, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=0))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new)
        v = tl.load(V + offs, mask=mask, other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l = l * alpha + tl.sum(p, axis=0)
        m = m_new
    part = (b * H + h) * num_splits + split
    tl.store(PartO + part * BLOCK_D + dims, acc / l, mask=d_ok)
    tl.store(PartLse + part, m + tl.log(l))


@triton.jit
def _decode_combine(PartO, PartLse, O, D, H, num_splits, stride_ob, stride_oh,
                    BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    h = tl.program_id(0)
    b = tl.program_id(1)
    splits = tl.arange(0, BLOCK_S)
    dims = tl.arange(0, BLOCK_D)
    s_ok = splits < num_splits
    first = (b * H + h) * num_splits
    lse_s = tl.load(PartLse + first + splits, mask=s_ok, other=float("-inf"))
    o_s = tl.load(PartO + (first + splits)[:, None] * BLOCK_D + dims[None, :],
                  mask=s_ok[:, None] & (dims[None, :] < D), other=0.0)
    lse_max = tl.max(lse_s, axis=0)
    w = tl.exp(lse_s - lse_max)
    o = tl.sum(w[:, None] * o_s, axis=0) / tl.sum(w, axis=0)
    tl.store(O + b * stride_ob + h * stride_oh + dims, o.to(O.dtype.element_ty), mask=dims < D)


@tad.autodiff(grad_inputs=("q", "k", "v"))
def decode_attention_split(q, k, v, split_len=1024):
    B, H, N, D = k.shape
    num_splits = triton.cdiv(N, split_len)
    block_d = triton.next_power_of_2(D)
    part_o = torch.empty(B, H, num_splits, block_d, dtype=torch.float32, device=q.device)
    part_lse = torch.empty(B, H, num_splits, dtype=torch.float32, device=q.device)
    o = torch.empty_like(q)
    # k and v share one contiguous layout.
    _decode_partial[(num_splits, H, B)](q, k, v, part_o, part_lse, D ** -0.5, N, D, H, split_len,
                                        num_splits, q.stride(0), q.stride(1), k.stride(0),
                                        k.stride(1), k.stride(2), BLOCK_N=min(64, split_len),
                                        BLOCK_D=block_d)
    _decode_combine[(H, B)](part_o, part_lse, o, D, H, num_splits, o.stride(0), o.stride(1),
                            BLOCK_S=triton.next_power_of_2(num_splits), BLOCK_D=block_d)
    return o


SWEEP = [
    {"B": 1, "H": 2, "N": 100, "D": 16, "split_len": 32},
    {"B": 2, "H": 3, "N": 70, "D": 40, "split_len": 64},
    {"B": 32, "H": 32, "N": 8192, "D": 128, "split_len": 1024},
    {"B": 4, "H": 8, "N": 32768, "D": 128, "split_len": 4096},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    B, H, N, D = dims["B"], dims["H"], dims["N"], dims["D"]
    q = torch.randn(B, H, D, dtype=dtype, device=device)
    k = torch.randn(B, H, N, D, dtype=dtype, device=device)
    v = torch.randn(B, H, N, D, dtype=dtype, device=device)
    return (q, k, v), {"split_len": dims["split_len"]}


def reference(q, k, v, split_len=1024):
    s = torch.einsum("bhd,bhnd->bhn", q, k) * q.shape[-1] ** -0.5
    return torch.einsum("bhn,bhnd->bhd", torch.softmax(s, dim=-1), v)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    kv = 2 * dims["B"] * dims["H"] * dims["N"] * dims["D"]
    # fwd reads k and v once; bwd reads them again and writes their gradients.
    return kv * item * (1 if mode == "fwd" else 2)

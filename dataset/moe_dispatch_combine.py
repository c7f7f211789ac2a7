"""A mixture-of-experts layer's data movement around per-expert elementwise experts, in two
launches over index tensors the stub computes with torch from the router's choices:

  dispatch: h[i] = x[token[i]] * expert_scale[expert[i]] + expert_bias[expert[i]] for the T * K
            (token, slot) pairs sorted by expert (a gather of token rows through an index tensor);
  combine:  out[t] = sum_k gate[t, k] * h[slot_of[t, k]] (a gather back through the inverse
            permutation, weighted by the router's gates).

x [T, D], expert_scale and expert_bias [E, D], gates [T, K]; topk_ids [T, K] (int64) is an input
that gets no gradient. The gradient of x is a scatter: several slots read one token row.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _moe_dispatch(X, SrcToken, Expert, Scale, Bias, H, num_slots, D, stride_x, stride_e,
                  stride_h, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    slots = tl.program_id(0) * BLOCK_S + tl.arange(0, BLOCK_S)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    slot_ok = slots < num_slots
    mask = slot_ok[:, None] & (cols[None, :] < D)
    token = tl.load(SrcToken + slots, mask=slot_ok, other=0)
    expert = tl.load(Expert + slots, mask=slot_ok, other=0)
    x = tl.load(X + token[:, None] * stride_x + cols[None, :], mask=mask, other=0.0)
    scale = tl.load(Scale + expert[:, None] * stride_e + cols[None, :], mask=mask, other=0.0)
    bias = tl.load(Bias + expert[:, None] * stride_e + cols[None, :], mask=mask, other=0.0)
    h = x.to(tl.float32) * scale.to(tl.float32) + bias.to(tl.float32)
    tl.store(H + slots[:, None] * stride_h + cols[None, :], h, mask=mask)


@triton.jit
def _moe_combine(H, SlotOf, Gates, Out, T, D, stride_h, stride_out, TOP_K: tl.constexpr,
                 BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    tok_ok = tokens < T
    mask = tok_ok[:, None] & (cols[None, :] < D)
    acc = tl.zeros([BLOCK_T, BLOCK_D], dtype=tl.float32)
    for k in tl.static_range(TOP_K):
        slot = tl.load(SlotOf + tokens * TOP_K + k, mask=tok_ok, other=0)
        gate = tl.load(Gates + tokens * TOP_K + k, mask=tok_ok, other=0.0).to(tl.float32)
        h = tl.load(H + slot[:, None] * stride_h + cols[None, :], mask=mask, other=0.0)
        acc += gate[:, None] * h
    tl.store(Out + tokens[:, None] * stride_out + cols[None, :], acc.to(Out.dtype.element_ty),
             mask=mask)


@tad.autodiff(grad_inputs=("x", "expert_scale", "expert_bias", "gates"))
def moe_dispatch_combine(x, expert_scale, expert_bias, gates, topk_ids):
    T, D = x.shape
    top_k = topk_ids.shape[1]
    num_slots = T * top_k
    # Sorting the flat (token, slot) choices by expert groups each expert's tokens together.
    order = torch.argsort(topk_ids.reshape(-1), stable=True)
    src_token = order // top_k
    expert = topk_ids.reshape(-1)[order]
    slot_of = torch.argsort(order)  # slot_of[t * K + k]: where (t, k) landed in sorted order
    h = torch.empty(num_slots, D, dtype=torch.float32, device=x.device)
    out = torch.empty_like(x)
    block_d = min(triton.next_power_of_2(D), 128)
    _moe_dispatch[(triton.cdiv(num_slots, 16), triton.cdiv(D, block_d))](
        x, src_token, expert, expert_scale, expert_bias, h, num_slots, D, x.stride(0),
        expert_scale.stride(0), h.stride(0), BLOCK_S=16, BLOCK_D=block_d)
    _moe_combine[(triton.cdiv(T, 16), triton.cdiv(D, block_d))](
        h, slot_of, gates, out, T, D, h.stride(0), out.stride(0), TOP_K=top_k, BLOCK_T=16,
        BLOCK_D=block_d)
    return out


SWEEP = [
    {"T": 37, "D": 40, "E": 5, "K": 2},
    {"T": 50, "D": 130, "E": 8, "K": 2},
    {"T": 8192, "D": 2048, "E": 64, "K": 2},
    {"T": 4096, "D": 4096, "E": 8, "K": 2},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    T, D, E, K = dims["T"], dims["D"], dims["E"], dims["K"]
    x = torch.randn(T, D, dtype=dtype, device=device)
    expert_scale = 1.0 + 0.1 * torch.randn(E, D, dtype=dtype, device=device)
    expert_bias = 0.1 * torch.randn(E, D, dtype=dtype, device=device)
    router = torch.randn(T, E, device=device)
    top = torch.topk(router, K, dim=-1)
    gates = torch.softmax(top.values, dim=-1).to(dtype)
    return (x, expert_scale, expert_bias, gates, top.indices), {}


def reference(x, expert_scale, expert_bias, gates, topk_ids):
    h = x[:, None, :] * expert_scale[topk_ids] + expert_bias[topk_ids]
    return (gates[:, :, None] * h).sum(1)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    T, D, K = dims["T"], dims["D"], dims["K"]
    # fwd: x gathered K times, h written and read back (fp32), out written.
    fwd = T * K * D * (item + 8) + T * D * item
    return fwd if mode == "fwd" else 2 * fwd

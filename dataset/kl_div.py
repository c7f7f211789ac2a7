"""KL divergence loss KL(p || softmax(z)) with reduction "batchmean", as distillation losses use
it: per row of logits z [M, V] and target p [M, V] (probabilities, or log-probabilities when
LOG_TARGET), loss_row = sum_j p_j (log p_j - log_softmax(z)_j); the stub finishes the mean over rows
in torch.

One program per row, two passes over the vocabulary in blocks: an online max and sum of
exponentials for the row's logsumexp, then the divergence. A zero probability adds nothing (0 log 0
is 0), as in torch; make_args draws none, since the gradient along p is unbounded there.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _kl_div_rows_fwd(Z, P, Loss, stride_z, stride_p, V, LOG_TARGET: tl.constexpr,
                     BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    Z += row.to(tl.int64) * stride_z
    P += row.to(tl.int64) * stride_p
    m = float("-inf")
    s = 0.0
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        z = tl.load(Z + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(z, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(z - m_new), axis=0)
        m = m_new
    lse = m + tl.log(s)
    acc = tl.zeros([BLOCK_V], dtype=tl.float32)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        mask = cols < V
        z = tl.load(Z + cols, mask=mask, other=0.0).to(tl.float32)
        if LOG_TARGET:
            log_p = tl.load(P + cols, mask=mask, other=0.0).to(tl.float32)
            term = tl.exp(log_p) * (log_p - (z - lse))
        else:
            p = tl.load(P + cols, mask=mask, other=0.0).to(tl.float32)
            positive = p > 0.0
            # log of a guarded operand: the untaken side must stay finite for the backward.
            log_p = tl.log(tl.where(positive, p, 1.0))
            term = tl.where(positive, p * (log_p - (z - lse)), 0.0)
        acc += tl.where(mask, term, 0.0)
    tl.store(Loss + row, tl.sum(acc, axis=0))


@tad.autodiff(grad_inputs=("logits", "target"))
def kl_div(logits, target, log_target=False):
    M, V = logits.shape
    rows = torch.empty(M, dtype=torch.float32, device=logits.device)
    block = min(triton.next_power_of_2(V), 2048)
    _kl_div_rows_fwd[(M,)](logits, target, rows, logits.stride(0), target.stride(0), V,
                           LOG_TARGET=log_target, BLOCK_V=block, num_warps=8 if block >= 2048 else 4)
    return (rows.sum() / M).to(logits.dtype)


SWEEP = [
    # Probabilities near 1/V: p log p curves like 1/p, which finite differences need not too small.
    {"M": 6, "V": 150, "log_target": False},
    {"M": 5, "V": 3000, "log_target": True},
    {"M": 1024, "V": 32000, "log_target": False},
    {"M": 1024, "V": 32000, "log_target": True},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, V = dims["M"], dims["V"]
    logits = torch.randn(M, V, dtype=torch.float32, device=device)
    target = torch.softmax(torch.randn(M, V, device=device), dim=-1)
    if dims.get("log_target", False):
        target = target.log()
    return (logits.to(dtype), target.to(dtype)), {"log_target": dims.get("log_target", False)}


def reference(logits, target, log_target=False):
    log_q = torch.log_softmax(logits, dim=-1)
    return torch.nn.functional.kl_div(log_q, target, reduction="batchmean", log_target=log_target)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["M"] * dims["V"]
    # fwd reads the logits twice and the target once; bwd reads both again, writes both grads.
    return n * item * (3 if mode == "fwd" else 4)

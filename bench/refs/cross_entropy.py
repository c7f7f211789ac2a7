"""Cross-entropy backward, loss per row of logits [M, V] with int64 targets and ignore_index.

    dlogits[i, j] = dloss[i] * (exp(logits[i, j] - lse[i]) - [j == target[i]]),
and 0 on an ignored row. lse is the row's logsumexp the forward saves. One program per row walks
the vocabulary in blocks; an ignored row only writes zeros (its logits are not read).
"""
import torch
import triton
import triton.language as tl

from ._common import nbytes, next_pow2

GRAD_INPUTS = ("logits",)


@triton.jit
def _cross_entropy_bwd(Logits, Targets, Lse, DLoss, DLogits, V, stride_l, stride_d, ignore_index,
                       BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    r = row.to(tl.int64)
    target = tl.load(Targets + r)
    valid = target != ignore_index
    lse = tl.load(Lse + r)
    scale = tl.where(valid, tl.load(DLoss + r).to(tl.float32), 0.0)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        mask = cols < V
        x = tl.load(Logits + r * stride_l + cols, mask=mask & valid, other=0.0).to(tl.float32)
        g = tl.exp(x - lse) - tl.where(cols == target, 1.0, 0.0)
        tl.store(DLogits + r * stride_d + cols, (g * scale).to(DLogits.dtype.element_ty),
                 mask=mask)


def save(logits, targets, ignore_index=-100):
    return torch.logsumexp(logits.float(), dim=-1).contiguous()


def backward(logits, targets, ignore_index=-100, *, grad_out, saved=None):
    lse = saved if saved is not None else save(logits, targets, ignore_index)
    M, V = logits.shape
    dloss = grad_out.contiguous()
    dlogits = torch.empty_like(logits)
    block = min(next_pow2(V), 4096)
    _cross_entropy_bwd[(M,)](logits, targets, lse, dloss, dlogits, V, logits.stride(0),
                             dlogits.stride(0), ignore_index, BLOCK_V=block,
                             num_warps=8 if block >= 2048 else 4)
    return (dlogits,)


def min_bytes(logits, targets, ignore_index=-100):
    # Reads the logits, targets, lse and dloss; writes dlogits.
    M = logits.shape[0]
    return 2 * nbytes(logits) + nbytes(targets) + M * (4 + logits.element_size())

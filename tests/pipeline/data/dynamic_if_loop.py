"""Negative log-likelihood per row of logits [M, V] with int64 targets and ignore_index, the
vocabulary walked in blocks: the target's logit is picked up under an `if` on the loop index and
the loaded target, and an ignored row's loss is 0 by an `if` on that loaded scalar."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _masked_nll_fwd(Logits, Targets, Loss, V, ignore_index, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    Logits += row * V
    target = tl.load(Targets + row)
    s = 0.0
    x_target = 0.0
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(Logits + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        s += tl.sum(tl.exp(x), axis=0)
        if (target >= start) & (target < start + BLOCK_V):
            x_target += tl.sum(tl.where(cols == target, x, 0.0), axis=0)
    if target == ignore_index:
        loss = 0.0
    else:
        loss = tl.log(s) - x_target
    tl.store(Loss + row, loss.to(Loss.dtype.element_ty))


@tad.autodiff(grad_inputs=("logits",))
def masked_nll(logits, targets, ignore_index=-100):
    M, V = logits.shape
    loss = torch.empty(M, dtype=logits.dtype, device=logits.device)
    _masked_nll_fwd[(M,)](logits, targets, loss, V, ignore_index, BLOCK_V=16)
    return loss


SWEEP = [{"M": 5, "V": 40}, {"M": 8, "V": 16}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, V = dims["M"], dims["V"]
    logits = torch.randn(M, V, dtype=dtype, device=device)
    targets = torch.randint(0, V, (M,), dtype=torch.int64, device=device)
    targets[torch.arange(M, device=device) % 3 == 1] = -100
    return (logits, targets), {"ignore_index": -100}


def reference(logits, targets, ignore_index=-100):
    return torch.nn.functional.cross_entropy(logits.double(), targets, ignore_index=ignore_index,
                                             reduction="none").to(logits.dtype)

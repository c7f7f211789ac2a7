"""Cross-entropy per row of logits [N, V] with int64 targets and ignore_index.

One program per row; the vocabulary is walked in blocks with an online max and sum of
exponentials, so V need not fit in one block. Saves the row's logsumexp for a backward.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _cross_entropy_fwd(Logits, Targets, Loss, Lse, stride_row, V, ignore_index,
                       BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    # N * V can pass 2**31 for large vocabularies.
    Logits += row.to(tl.int64) * stride_row
    m = float("-inf")
    s = 0.0
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(Logits + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        # Rescale the running sum to the new max before adding this block.
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    lse = m + tl.log(s)
    tl.store(Lse + row, lse)
    target = tl.load(Targets + row)
    valid = target != ignore_index
    # An ignored row must not read the logit at index ignore_index; its loss is 0.
    x_target = tl.load(Logits + target, mask=valid, other=0.0).to(tl.float32)
    loss = tl.where(valid, lse - x_target, 0.0)
    tl.store(Loss + row, loss)


@tad.autodiff(grad_inputs=("logits",))
def cross_entropy(logits, targets, ignore_index=-100):
    N, V = logits.shape
    loss = torch.empty(N, dtype=logits.dtype, device=logits.device)
    lse = torch.empty(N, dtype=torch.float32, device=logits.device)
    block = min(triton.next_power_of_2(V), 4096)
    _cross_entropy_fwd[(N,)](logits, targets, loss, lse, logits.stride(0), V, ignore_index,
                             BLOCK_V=block, num_warps=8 if block >= 2048 else 4)
    return loss


SWEEP = [
    {"N": 4, "V": 1000},
    {"N": 4, "V": 10000},
    {"N": 4096, "V": 32000},
    {"N": 8192, "V": 50257},
    {"N": 8192, "V": 128256, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    N, V = dims["N"], dims["V"]
    logits = torch.randn(N, V, dtype=dtype, device=device)
    targets = torch.randint(0, V, (N,), dtype=torch.int64, device=device)
    targets[torch.arange(N, device=device) % 4 == 1] = -100
    return (logits, targets), {"ignore_index": -100}


def reference(logits, targets, ignore_index=-100):
    return torch.nn.functional.cross_entropy(logits, targets, ignore_index=ignore_index,
                                             reduction="none")


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    N, V = dims["N"], dims["V"]
    # fwd reads the logits once; bwd reads them again and writes their gradient.
    return N * V * item * (1 if mode == "fwd" else 2) + N * (8 + 4 + item)

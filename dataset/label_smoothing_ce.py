"""Cross-entropy with label smoothing per row of logits z [N, V], int64 targets and ignore_index:
loss = (1 - eps) (lse - z_target) + eps (lse - mean_j z_j), which is the cross-entropy against the
smoothed target (1 - eps) onehot + eps / V. One pass over the vocabulary keeps an online max, the
rescaled sum of exponentials and the plain sum of logits together."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _label_smoothing_ce_fwd(Z, Targets, Loss, stride_z, V, smoothing, ignore_index,
                            BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    Z += row.to(tl.int64) * stride_z
    m = float("-inf")
    s = 0.0
    total = 0.0
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        mask = cols < V
        z = tl.load(Z + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(z, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(z - m_new), axis=0)
        m = m_new
        total += tl.sum(tl.where(mask, z, 0.0), axis=0)
    lse = m + tl.log(s)
    target = tl.load(Targets + row)
    valid = target != ignore_index
    z_target = tl.load(Z + target, mask=valid, other=0.0).to(tl.float32)
    loss = (1.0 - smoothing) * (lse - z_target) + smoothing * (lse - total / V)
    tl.store(Loss + row, tl.where(valid, loss, 0.0))


@tad.autodiff(grad_inputs=("logits",))
def label_smoothing_ce(logits, targets, smoothing=0.1, ignore_index=-100):
    N, V = logits.shape
    loss = torch.empty(N, dtype=logits.dtype, device=logits.device)
    block = min(triton.next_power_of_2(V), 4096)
    _label_smoothing_ce_fwd[(N,)](logits, targets, loss, logits.stride(0), V, smoothing,
                                  ignore_index, BLOCK_V=block,
                                  num_warps=8 if block >= 2048 else 4)
    return loss


SWEEP = [
    {"N": 6, "V": 1000},
    {"N": 3, "V": 9000},
    {"N": 4096, "V": 32000},
    {"N": 8192, "V": 128256, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    N, V = dims["N"], dims["V"]
    logits = torch.randn(N, V, dtype=dtype, device=device)
    targets = torch.randint(0, V, (N,), dtype=torch.int64, device=device)
    targets[torch.arange(N, device=device) % 3 == 2] = -100
    return (logits, targets), {"smoothing": 0.1, "ignore_index": -100}


def reference(logits, targets, smoothing=0.1, ignore_index=-100):
    return torch.nn.functional.cross_entropy(logits, targets, ignore_index=ignore_index,
                                             reduction="none", label_smoothing=smoothing)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    N, V = dims["N"], dims["V"]
    # fwd reads the logits once; bwd reads them again and writes their gradient.
    return N * V * item * (1 if mode == "fwd" else 2) + N * (8 + item)

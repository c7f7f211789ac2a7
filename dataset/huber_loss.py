"""Huber (smooth L1) loss with mean reduction over every element of input and target:
h(d) = d^2 / 2 if |d| < delta else delta (|d| - delta / 2), d = input - target. Each program sums
its block into one float32 partial; the stub finishes the mean in torch (partials.sum() / n)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _huber_partials(Inp, Tgt, Partial, n, delta, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    d = (tl.load(Inp + offs, mask=mask, other=0.0).to(tl.float32)
         - tl.load(Tgt + offs, mask=mask, other=0.0).to(tl.float32))
    ad = tl.abs(d)
    h = tl.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))
    tl.store(Partial + pid, tl.sum(h, axis=0))


@tad.autodiff(grad_inputs=("input", "target"))
def huber_loss(input, target, delta=1.0):
    n = input.numel()
    block = 1024
    partial = torch.empty(triton.cdiv(n, block), dtype=torch.float32, device=input.device)
    # Masked lanes have d = 0, so they add nothing to a partial.
    _huber_partials[(triton.cdiv(n, block),)](input, target, partial, n, delta, BLOCK_SIZE=block)
    return (partial.sum() / n).to(input.dtype)


SWEEP = [
    {"n": 3000, "delta": 1.0},
    {"n": 1500, "delta": 0.5},
    {"n": 1 << 24, "delta": 1.0},
    {"n": 1 << 26, "delta": 1.0, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    inp = torch.randn(dims["n"], dtype=dtype, device=device)
    target = torch.randn(dims["n"], dtype=dtype, device=device)
    return (inp, target), {"delta": dims.get("delta", 1.0)}


def reference(input, target, delta=1.0):
    return torch.nn.functional.huber_loss(input, target, reduction="mean", delta=delta)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    # fwd reads both inputs; bwd reads them again and writes both gradients.
    return dims["n"] * item * (2 if mode == "fwd" else 4)

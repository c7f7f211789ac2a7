"""Logit soft-capping (Gemma-2): y = cap * tanh(x / cap), bounding attention or output logits to
(-cap, cap). tanh comes from libdevice, imported by its bare name as kernel libraries do."""
import torch
import triton
import triton.language as tl
from triton.language.extra.libdevice import tanh

import tad


@triton.jit
def _softcap_fwd(X, Y, n, cap, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + offs, (cap * tanh(x / cap)).to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x",))
def softcap(x, cap=30.0):
    y = torch.empty_like(x)
    n = x.numel()
    _softcap_fwd[(triton.cdiv(n, 2048),)](x, y, n, cap, BLOCK_SIZE=2048, num_warps=8)
    return y


SWEEP = [
    {"M": 3, "V": 1000, "cap": 30.0},
    {"M": 5, "V": 700, "cap": 2.0},
    {"M": 4096, "V": 32000, "cap": 30.0},
    {"M": 8192, "V": 128256, "cap": 30.0, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    x = 10.0 * torch.randn(dims["M"], dims["V"], dtype=dtype, device=device)
    return (x,), {"cap": dims.get("cap", 30.0)}


def reference(x, cap=30.0):
    return cap * torch.tanh(x / cap)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    # fwd: x in, y out; bwd: x, dy in, dx out.
    return dims["M"] * dims["V"] * item * (2 if mode == "fwd" else 3)

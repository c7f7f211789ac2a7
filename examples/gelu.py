"""GELU (erf form), elementwise over a flat tensor with a masked tail."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _gelu_fwd(X, Y, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(Y + offs, y, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def gelu(x):
    y = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    _gelu_fwd[grid](x, y, n, BLOCK_SIZE=1024)
    return y


SWEEP = [
    {"n": 1000},
    {"n": 4097},
    {"n": 1 << 20},
    {"n": 1 << 24},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["n"], dtype=dtype, device=device),), {}


def reference(x):
    return torch.nn.functional.gelu(x)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    return dims["n"] * item * (2 if mode == "fwd" else 3)

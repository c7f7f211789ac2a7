"""Torch code that is fine: views of the grad input and the output, a buffer torch fills from no
grad input (an index table), torch.empty. The gradient flows through the kernel alone."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def gather_scale(X, IDX, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    src = tl.load(IDX + offs, mask=mask, other=0)
    x = tl.load(X + src, mask=mask)
    tl.store(Y + offs, 2.0 * x, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def reversed_doubled(x):
    flat = x.reshape(-1)
    n = flat.numel()
    idx = torch.arange(n - 1, -1, -1, device=x.device, dtype=torch.int32)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    gather_scale[(triton.cdiv(n, 64),)](flat, idx, out.view(-1), n, BLOCK=64)
    return out


SWEEP = [{"M": 4, "N": 30}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=dims.get("device", "cuda")),), {}


def reference(x):
    return 2.0 * x.reshape(-1).flip(0).reshape(x.shape)

"""optional_pointers.py with entries that pass None for the weight or the bias: the kernel gets other
buffers in each, so the module has a node per launch signature (with W and B, without W, without
B), each specialized on its arguments' not being None, and a call gets the node of the tensors it
passes."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _affine_silu_fwd(X, W, B, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32)
    if W is not None:
        x = x * tl.load(W + cols, mask=m, other=0.0).to(tl.float32)
    if B is not None:
        x = x + tl.load(B + cols, mask=m, other=0.0).to(tl.float32)
    y = x * tl.sigmoid(x)
    tl.store(Y + row * N + cols, y.to(Y.dtype.element_ty), mask=m)


@tad.autodiff(grad_inputs=("x", "w", "b"))
def affine_silu(x, w, b):
    M, N = x.shape
    y = torch.empty_like(x)
    _affine_silu_fwd[(M,)](x, w, b, y, N, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 3, "N": 20}, {"M": 2, "N": 7, "w": False}, {"M": 4, "N": 9, "b": False}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N = dims["M"], dims["N"]
    x = torch.randn(M, N, dtype=dtype, device=device)
    w = torch.randn(N, dtype=dtype, device=device) if dims.get("w", True) else None
    b = torch.randn(N, dtype=dtype, device=device) if dims.get("b", True) else None
    return (x, w, b), {}


def reference(x, w, b):
    z = x * (1 if w is None else w) + (0 if b is None else b)
    return z * torch.sigmoid(z)

"""SwiGLU gate, silu(a) * b, elementwise over two flat tensors of the same shape."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _swiglu_fwd(A, B, Y, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    a = tl.load(A + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + offs, mask=mask, other=0.0).to(tl.float32)
    y = a * tl.sigmoid(a) * b
    tl.store(Y + offs, y, mask=mask)


@tad.autodiff(grad_inputs=("a", "b"))
def swiglu(a, b):
    y = torch.empty_like(a)
    n = a.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    _swiglu_fwd[grid](a, b, y, n, BLOCK_SIZE=1024)
    return y


SWEEP = [
    {"M": 3, "N": 333},
    {"M": 16, "N": 1000},
    {"M": 8192, "N": 4096},
    {"M": 16384, "N": 14336, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    shape = (dims["M"], dims["N"])
    return (torch.randn(shape, dtype=dtype, device=device),
            torch.randn(shape, dtype=dtype, device=device)), {}


def reference(a, b):
    return torch.nn.functional.silu(a) * b


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    return dims["M"] * dims["N"] * item * (3 if mode == "fwd" else 5)

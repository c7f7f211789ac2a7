"""Row-wise softmax: one program per row, the whole row in one block."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _softmax_fwd(X, Y, stride_x, stride_y, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(X + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    y = num / tl.sum(num, axis=0)
    tl.store(Y + row * stride_y + cols, y, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def softmax(x):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(n_cols)
    num_warps = 4 if block <= 2048 else 8
    _softmax_fwd[(n_rows,)](x, y, x.stride(0), y.stride(0), n_cols, BLOCK_SIZE=block, num_warps=num_warps)
    return y


SWEEP = [
    {"M": 3, "N": 37},
    {"M": 64, "N": 1000},
    {"M": 4096, "N": 1024},
    {"M": 4096, "N": 4096},
    {"M": 1024, "N": 8192},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {}


def reference(x):
    return torch.softmax(x, dim=-1)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    return dims["M"] * dims["N"] * item * (2 if mode == "fwd" else 3)

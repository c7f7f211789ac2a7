"""Gated linear recurrence h_t = a_t * h_{t-1} + x_t over time (RWKV / GLA style), h_{-1} = 0.

a, x and h are [B, T, C]. Each program owns BLOCK_C channels of one batch element and walks the
T steps in order, carrying h in registers and writing every h_t.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _linear_recurrence_fwd(A, X, Hs, T, C, stride_b, stride_t, BLOCK_C: tl.constexpr):
    pid_b = tl.program_id(0)
    pid_c = tl.program_id(1)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = cols < C
    base = pid_b.to(tl.int64) * stride_b + cols
    h = tl.zeros([BLOCK_C], dtype=tl.float32)
    for t in range(0, T):
        offs = base + t * stride_t
        a = tl.load(A + offs, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        h = a * h + x
        tl.store(Hs + offs, h, mask=mask)


@tad.autodiff(grad_inputs=("a", "x"))
def linear_recurrence(a, x):
    B, T, C = x.shape
    h = torch.empty_like(x)
    block_c = min(triton.next_power_of_2(C), 256)
    grid = (B, triton.cdiv(C, block_c))
    # a, x and h share one contiguous layout, so one pair of strides serves all three.
    _linear_recurrence_fwd[grid](a, x, h, T, C, x.stride(0), x.stride(1), BLOCK_C=block_c)
    return h


SWEEP = [
    {"B": 2, "T": 16, "C": 40},
    {"B": 2, "T": 64, "C": 100},
    {"B": 8, "T": 2048, "C": 1024},
    {"B": 16, "T": 4096, "C": 2048, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    shape = (dims["B"], dims["T"], dims["C"])
    # Decays in (0.8, 0.99) keep h bounded and old steps' gradients measurable.
    a = (0.8 + 0.19 * torch.rand(shape, device=device)).to(dtype)
    x = torch.randn(shape, dtype=dtype, device=device)
    return (a, x), {}


def reference(a, x):
    h = torch.zeros_like(x[:, 0])
    hs = []
    for t in range(x.shape[1]):
        h = a[:, t] * h + x[:, t]
        hs.append(h)
    return torch.stack(hs, dim=1)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["B"] * dims["T"] * dims["C"]
    # fwd: a, x in, h out; bwd: a, h, dh in, da, dx out.
    return n * item * (3 if mode == "fwd" else 5)

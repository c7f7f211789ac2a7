"""Gated RMSNorm (Mamba-2's output norm) with the gate applied before or after the norm, chosen by
a constexpr: y = rmsnorm(x * silu(z)) * w, or y = rmsnorm(x) * w * silu(z) when NORM_BEFORE_GATE.
x, z [M, N], w [N]; one program per row."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def _gated_rmsnorm_fwd(X, Z, W, Y, stride_x, stride_z, stride_y, N, eps,
                       NORM_BEFORE_GATE: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    z = tl.load(Z + row * stride_z + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    if not NORM_BEFORE_GATE:
        x = x * _silu(z)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    y = x * rstd * w
    if NORM_BEFORE_GATE:
        y = y * _silu(z)
    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x", "z", "weight"))
def gated_rmsnorm(x, z, weight, eps=1e-5, norm_before_gate=False):
    M, N = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(N)
    _gated_rmsnorm_fwd[(M,)](x, z, weight, y, x.stride(0), z.stride(0), y.stride(0), N, eps,
                             NORM_BEFORE_GATE=norm_before_gate, BLOCK_N=block,
                             num_warps=min(max(block // 256, 1), 8))
    return y


SWEEP = [
    {"M": 5, "N": 40, "norm_before_gate": False},
    {"M": 7, "N": 300, "norm_before_gate": True},
    {"M": 2048, "N": 4096, "norm_before_gate": False},
    {"M": 2048, "N": 4096, "norm_before_gate": True},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N = dims["M"], dims["N"]
    x = torch.randn(M, N, dtype=dtype, device=device)
    z = torch.randn(M, N, dtype=dtype, device=device)
    weight = 1.0 + 0.1 * torch.randn(N, dtype=dtype, device=device)
    return (x, z, weight), {"eps": 1e-5, "norm_before_gate": dims["norm_before_gate"]}


def reference(x, z, weight, eps=1e-5, norm_before_gate=False):
    def rms(t):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps) * weight
    gate = torch.nn.functional.silu(z)
    return rms(x) * gate if norm_before_gate else rms(x * gate)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["M"] * dims["N"]
    # fwd: x, z in, y out; bwd: x, z, dy in, dx, dz out.
    return n * item * (3 if mode == "fwd" else 5)

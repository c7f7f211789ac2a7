"""RWKV-style token shift (time mixing): with xx the sequence shifted one step back in time (zero
at t = 0), three mixes xr, xk, xv = x * mu + xx * (1 - mu) for per-channel mu_r, mu_k, mu_v [C];
x [B, T, C].

Programs own BLOCK_T time steps of one sample and BLOCK_C channels (a 3-D grid); each row of x is
read twice, as itself and as the next step's predecessor.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _token_shift_fwd(X, MuR, MuK, MuV, R, K, V, T, C, stride_b, stride_t, BLOCK_T: tl.constexpr,
                     BLOCK_C: tl.constexpr):
    ts = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    base = tl.program_id(2).to(tl.int64) * stride_b
    col_ok = cols < C
    mask = (ts[:, None] < T) & col_ok[None, :]
    offs = base + ts[:, None] * stride_t + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    prev = tl.load(X + offs - stride_t, mask=mask & (ts[:, None] > 0), other=0.0).to(tl.float32)
    mu_r = tl.load(MuR + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    mu_k = tl.load(MuK + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    mu_v = tl.load(MuV + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    tl.store(R + offs, (prev + mu_r * (x - prev)).to(R.dtype.element_ty), mask=mask)
    tl.store(K + offs, (prev + mu_k * (x - prev)).to(K.dtype.element_ty), mask=mask)
    tl.store(V + offs, (prev + mu_v * (x - prev)).to(V.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x", "mu_r", "mu_k", "mu_v"))
def token_shift(x, mu_r, mu_k, mu_v):
    B, T, C = x.shape
    r, k, v = torch.empty_like(x), torch.empty_like(x), torch.empty_like(x)
    block_t, block_c = 16, min(triton.next_power_of_2(C), 128)
    grid = (triton.cdiv(T, block_t), triton.cdiv(C, block_c), B)
    # All four [B, T, C] tensors are contiguous and share x's strides.
    _token_shift_fwd[grid](x, mu_r, mu_k, mu_v, r, k, v, T, C, x.stride(0), x.stride(1),
                           BLOCK_T=block_t, BLOCK_C=block_c)
    return r, k, v


SWEEP = [
    {"B": 2, "T": 37, "C": 40},
    {"B": 1, "T": 20, "C": 200},
    {"B": 8, "T": 4096, "C": 2048},
    {"B": 16, "T": 4096, "C": 4096, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    B, T, C = dims["B"], dims["T"], dims["C"]
    x = torch.randn(B, T, C, dtype=dtype, device=device)
    mus = [torch.rand(C, device=device).to(dtype) for _ in range(3)]
    return (x, *mus), {}


def reference(x, mu_r, mu_k, mu_v):
    xx = torch.nn.functional.pad(x, (0, 0, 1, -1))
    return tuple(x * mu + xx * (1 - mu) for mu in (mu_r, mu_k, mu_v))


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["B"] * dims["T"] * dims["C"]
    # fwd: x in, three mixes out; bwd: x, three cotangents in, dx out.
    return n * item * (4 if mode == "fwd" else 5)

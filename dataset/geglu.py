"""GEGLU over a fused projection x [M, 2N]: gelu_tanh(x[:, :N]) * x[:, N:], in 2-D tiles."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

import tad

# sqrt(2 / pi), the scale inside the tanh approximation of GELU.
_SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)


@triton.jit
def _gelu_tanh(a):
    inner = _SQRT_2_OVER_PI * (a + 0.044715 * a * a * a)
    return 0.5 * a * (1.0 + libdevice.tanh(inner))


@triton.jit
def _geglu_fwd(X, Y, M, N, stride_xm, stride_ym, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    a_ptrs = X + rows[:, None] * stride_xm + cols[None, :]
    a = tl.load(a_ptrs, mask=mask, other=0.0).to(tl.float32)
    # The gate half starts N columns after the value half, in the same row.
    b = tl.load(a_ptrs + N, mask=mask, other=0.0).to(tl.float32)
    y = _gelu_tanh(a) * b
    tl.store(Y + rows[:, None] * stride_ym + cols[None, :], y, mask=mask)


@tad.autodiff(grad_inputs=("x",))
def geglu(x):
    M, N2 = x.shape
    N = N2 // 2
    y = torch.empty(M, N, dtype=x.dtype, device=x.device)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    _geglu_fwd[grid](x, y, M, N, x.stride(0), y.stride(0), BLOCK_M=32, BLOCK_N=128)
    return y


SWEEP = [
    {"M": 5, "N": 100},
    {"M": 40, "N": 300},
    {"M": 8192, "N": 4096},
    {"M": 16384, "N": 11008, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], 2 * dims["N"], dtype=dtype, device=device),), {}


def reference(x):
    a, b = x.chunk(2, dim=-1)
    return torch.nn.functional.gelu(a, approximate="tanh") * b


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    MN = dims["M"] * dims["N"]
    # fwd reads 2MN, writes MN; bwd reads x (2MN) and dy (MN), writes dx (2MN).
    return MN * item * (3 if mode == "fwd" else 5)

"""Row-wise kernel with `if` on run-time scalars: rows at or past n_active return early (their
output stays zero), the first n_scaled rows compute x * w, the others sigmoid(x) + w * w."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _gated_rows_fwd(X, W, Y, n_active, n_scaled, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_active:
        return
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    if row < n_scaled:
        y = x * w
    else:
        y = tl.sigmoid(x) + w * w
    tl.store(Y + row * N + cols, y, mask=mask)


@tad.autodiff(grad_inputs=("x", "w"))
def gated_rows(x, w, n_active, n_scaled):
    M, N = x.shape
    y = torch.zeros_like(x)
    _gated_rows_fwd[(M,)](x, w, y, n_active, n_scaled, N, BLOCK=triton.next_power_of_2(N))
    return y


SWEEP = [{"M": 6, "N": 8}, {"M": 9, "N": 20}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N = dims["M"], dims["N"]
    x = torch.randn(M, N, dtype=dtype, device=device)
    w = torch.randn(N, dtype=dtype, device=device)
    return (x, w, M - 2, M // 2), {}


def reference(x, w, n_active, n_scaled):
    y = torch.zeros_like(x)
    y[:n_scaled] = x[:n_scaled] * w
    y[n_scaled:n_active] = torch.sigmoid(x[n_scaled:n_active]) + w * w
    return y

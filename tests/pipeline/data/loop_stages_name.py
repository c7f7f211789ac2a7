"""bias_grad.py with a value named TAD_LOOP_STAGES, the constexpr a pipelined loop's stages are
spelled with (passes/pipeline_loops.h): the backward must name its own value otherwise."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _bias_rows(X, B, Y, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0)
    TAD_LOOP_STAGES = tl.load(B + cols, mask=mask, other=0.0)
    tl.store(Y + row * stride + cols, tl.exp(x * TAD_LOOP_STAGES) + TAD_LOOP_STAGES, mask=mask)


@tad.autodiff(grad_inputs=("x", "bias"))
def bias_rows(x, bias):
    M, N = x.shape
    y = torch.empty_like(x)
    _bias_rows[(M,)](x, bias, y, x.stride(0), N, BLOCK=triton.next_power_of_2(N))
    return y


# tl.exp takes float32 and float64 only: the forward itself does not compile for float16.
DTYPES = [torch.float32]
SWEEP = [{"M": 7, "N": 20}, {"M": 11, "N": 33}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    M, N = dims["M"], dims["N"]
    return (0.5 * torch.randn(M, N, dtype=dt, device=dev), 0.5 * torch.randn(N, dtype=dt, device=dev)), {}


def reference(x, bias):
    return torch.exp(x * bias) + bias

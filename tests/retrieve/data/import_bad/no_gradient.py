# The backward returns no gradient at all.
import torch
import triton
import triton.language as tl

# ============================================================
# FORWARD Triton Kernels
# ============================================================


@triton.jit
def _copy(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)


# ============================================================
# autograd.Function Class Definition
# ============================================================


class Copy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        n = x.numel()
        _copy[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
        return y

    @staticmethod
    def backward(ctx, dy):
        return None

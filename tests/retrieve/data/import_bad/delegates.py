# The Function's forward launches nothing itself: it calls a launcher found in a table at run time,
# which tad does not follow, so the stub would launch no kernel.
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


def _launch(x):
    y = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y


_LAUNCHERS = {"copy": _launch}


# ============================================================
# autograd.Function Class Definition
# ============================================================


class Copy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return _LAUNCHERS["copy"](x)

    @staticmethod
    def backward(ctx, dy):
        return dy

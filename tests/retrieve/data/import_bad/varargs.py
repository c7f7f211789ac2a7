# A forward taking *args: a stub must name its parameters.
import torch

# ============================================================
# autograd.Function Class Definition
# ============================================================


class Sum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, *xs):
        return sum(xs)

    @staticmethod
    def backward(ctx, dy):
        return dy

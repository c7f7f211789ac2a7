# A hand-written stand-in for a module tad generates from scale_add.py (forward + GRAD_INPUTS),
# used by the GPU worker tests; make_forward(factor != 1) gives a deliberately wrong backward.
import torch

import scale_add as fwd

GRAD_INPUTS = ("x", "y")


def make_forward(factor):
    class ScaleAdd(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, alpha):
            ctx.alpha = alpha
            return fwd.scale_add(x, y, alpha)

        @staticmethod
        def backward(ctx, d_out, d_total):
            dy = d_out + d_total
            return ctx.alpha * dy * factor, dy, None

    def forward(x, y, alpha=2.0):
        return ScaleAdd.apply(x, y, alpha)

    return forward


forward = make_forward(1.0)

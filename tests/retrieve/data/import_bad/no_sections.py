# No section banners: the importer cannot tell forward kernels from backward ones.
import torch


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, dy):
        return 2 * dy

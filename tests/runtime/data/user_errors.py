# Forward file for the diagnostics of failing user code: dims["case"] picks what goes wrong. The
# tests name lines of this file: keep them where they are, or update the tests.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)


def copy(x):
    y = torch.empty_like(x)
    if x.numel() == 3:
        raise RuntimeError("three is not allowed")  # line 17: the stub raises
    if x.numel() == 5:
        _copy_kernel[(1,)](x, y, BLOCK=8)  # line 19: a launch without n
    _copy_kernel[(1,)](x, y, x.numel(), BLOCK=8)
    return y


def make_args(dims):
    case = dims["case"]
    if case == "raise":
        return helper(dims)  # line 27
    if case == "none":
        return None
    if case == "tensor":
        return torch.zeros(4)
    if case == "too_many":
        return (torch.zeros(4), torch.zeros(4)), {}
    return (torch.zeros(dims["n"]),), {}


def helper(dims):
    return {"x": torch.zeros(dims["missing"])}  # line 38: KeyError

# A small forward file for the runtime tests: two launches, a grid lambda, a temp buffer and a
# view of an input, so that a trace exercises every kind of tensor reference.
import torch
import triton
import triton.language as tl

SWEEP = [{"N": 300}, {"N": 4096, "required": False}]
DTYPES = ["float32"]

print("importing scale_add")  # user prints go to stderr: the protocol must survive them


@triton.jit
def _scale_add_kernel(X, Y, Out, Partial, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    out = alpha * tl.load(X + offs, mask=mask) + tl.load(Y + offs, mask=mask)
    tl.store(Out + offs, out, mask=mask)
    tl.store(Partial + pid, tl.sum(out, axis=0))


@triton.jit
def _sum_kernel(Partial, Total, m, BLOCK: tl.constexpr = 16):
    offs = tl.arange(0, BLOCK)
    tl.store(Total, tl.sum(tl.load(Partial + offs, mask=offs < m, other=0.0), axis=0))


def scale_add(x, y, alpha=2.0):
    print("running scale_add")
    out = torch.empty_like(x)
    total = torch.empty((), dtype=x.dtype, device=x.device)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    partial = torch.empty(triton.cdiv(n, 128), dtype=x.dtype, device=x.device)
    _scale_add_kernel[grid](x.view(-1), y, out, partial, n, alpha, BLOCK=128, num_warps=4)
    _sum_kernel[(1,)](partial, total, partial.numel(), BLOCK=triton.next_power_of_2(partial.numel()))
    return out, total


def make_args(dims):
    dtype = getattr(torch, dims["dtype"])
    x = (torch.arange(dims["N"], device=dims["device"]) % 16).to(dtype) / 8  # sums fit float16
    y = torch.ones(dims["N"], dtype=dtype, device=dims["device"])
    return (x, y), {"alpha": 0.5}


def reference(x, y, alpha=2.0):
    out = alpha * x + y
    return out, out.sum()

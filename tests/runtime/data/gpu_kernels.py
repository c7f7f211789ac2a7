# Kernels for the GPU worker tests: an autotuned, heuristic kernel calling a @triton.jit helper,
# and a kernel that faults.
import torch
import triton
import triton.language as tl


@triton.jit
def _square(x):
    return x * x


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=2),
                          triton.Config({"BLOCK": 128}, num_warps=4)], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def _square_kernel(X, Out, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(Out + offs, _square(tl.load(X + offs)))
    else:
        mask = offs < n
        tl.store(Out + offs, _square(tl.load(X + offs, mask=mask)), mask=mask)


@triton.jit
def _fault_kernel(Out):
    far = tl.program_id(0).to(tl.int64) + (1 << 40)
    tl.store(Out + far, 1.0)


def square(x):
    out = torch.empty_like(x)
    n = x.numel()
    _square_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out


def fault(x):
    _fault_kernel[(1,)](x)
    return x


def make_args(dims):
    if dims.get("case") == "oom":
        torch.empty(1 << 50, dtype=torch.uint8, device=dims["device"])
    return (torch.randn(dims["N"], dtype=getattr(torch, dims["dtype"]), device=dims["device"]),), {}

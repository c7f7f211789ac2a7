"""BatchNorm in training mode over x [N, C, L] (normalising each channel over N and L) with affine
weight and bias, which also updates the running statistics in place: running_mean and running_var
move towards the batch's mean and unbiased variance by `momentum`. Those stores are side effects:
no gradient flows through them, and the stub does not return them.

One program per channel walks the channel's N * L elements in blocks, three times: the mean, the
variance around it, then the normalised output.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _batch_norm_train_fwd(X, W, B, Y, RunMean, RunVar, Mean, Rstd, N, C, L, stride_n, stride_c,
                          momentum, eps, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    count = N * L
    base = c * stride_c
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, count, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        offs = base + (idx // L) * stride_n + idx % L
        acc += tl.load(X + offs, mask=idx < count, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / count
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, count, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        mask = idx < count
        offs = base + (idx // L) * stride_n + idx % L
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        xc = tl.where(mask, x - mean, 0.0)
        acc += xc * xc
    var = tl.sum(acc, axis=0) / count
    rstd = tl.rsqrt(var + eps)
    tl.store(Mean + c, mean)
    tl.store(Rstd + c, rstd)
    # Running statistics: the unbiased variance, as torch keeps it.
    run_mean = tl.load(RunMean + c).to(tl.float32)
    run_var = tl.load(RunVar + c).to(tl.float32)
    tl.store(RunMean + c, (1.0 - momentum) * run_mean + momentum * mean)
    tl.store(RunVar + c, (1.0 - momentum) * run_var + momentum * var * count / (count - 1))
    w = tl.load(W + c).to(tl.float32)
    b = tl.load(B + c).to(tl.float32)
    for start in range(0, count, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        mask = idx < count
        offs = base + (idx // L) * stride_n + idx % L
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + offs, ((x - mean) * rstd * w + b).to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x", "weight", "bias"))
def batch_norm_train(x, weight, bias, running_mean, running_var, momentum=0.1, eps=1e-5):
    N, C, L = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(C, dtype=torch.float32, device=x.device)
    rstd = torch.empty(C, dtype=torch.float32, device=x.device)
    block = min(triton.next_power_of_2(N * L), 1024)
    # y is allocated like x, so x's strides address both.
    _batch_norm_train_fwd[(C,)](x, weight, bias, y, running_mean, running_var, mean, rstd, N, C,
                                L, x.stride(0), x.stride(1), momentum, eps, BLOCK=block)
    return y


SWEEP = [
    {"N": 3, "C": 5, "L": 70},
    {"N": 4, "C": 12, "L": 300},
    {"N": 32, "C": 256, "L": 4096},
    {"N": 64, "C": 512, "L": 1024},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    N, C, L = dims["N"], dims["C"], dims["L"]
    x = 2.0 + torch.randn(N, C, L, dtype=dtype, device=device)
    weight = 1.0 + 0.1 * torch.randn(C, dtype=dtype, device=device)
    bias = 0.1 * torch.randn(C, dtype=dtype, device=device)
    running_mean = torch.zeros(C, dtype=torch.float32, device=device)
    running_var = torch.ones(C, dtype=torch.float32, device=device)
    return (x, weight, bias, running_mean, running_var), {"momentum": 0.1, "eps": 1e-5}


def reference(x, weight, bias, running_mean, running_var, momentum=0.1, eps=1e-5):
    # Copies of the running statistics: the reference must not move the caller's.
    return torch.nn.functional.batch_norm(x, running_mean.to(x.dtype, copy=True),
                                          running_var.to(x.dtype, copy=True), weight, bias,
                                          training=True, momentum=momentum, eps=eps)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["N"] * dims["C"] * dims["L"]
    # fwd reads x three times and writes y; bwd reads x and dy twice and writes dx.
    return n * item * (4 if mode == "fwd" else 5)

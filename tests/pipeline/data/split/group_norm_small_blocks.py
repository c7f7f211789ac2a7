"""GroupNorm of x [N, C, HW] with G groups, walked in small blocks (BLOCK_SIZE 32): a group of
C/G * HW elements takes tens of iterations, so that the backward's loops split across programs
(passes/split_loops.h) on shapes the CPU interpreter runs. The kernel is dataset/group_norm.py's.

One program per (sample, group). A group's C/G channels are contiguous in memory, so the program
walks C/G * HW elements in blocks: one pass for the mean, one for the variance (two passes avoid
the cancellation of E[x^2] - E[x]^2), one to normalise.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _group_norm_fwd(X, Y, W, B, Mean, Rstd, stride_xn, stride_yn, C, HW, G, eps,
                    BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // G
    g = pid % G
    ch_per_group = C // G
    group_size = ch_per_group * HW
    X += n.to(tl.int64) * stride_xn + g * group_size
    Y += n.to(tl.int64) * stride_yn + g * group_size

    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, group_size, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(X + offs, mask=offs < group_size, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / group_size

    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, group_size, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        mask = offs < group_size
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        xc = tl.where(mask, x - mean, 0.0)
        acc += xc * xc
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / group_size + eps)
    tl.store(Mean + pid, mean)
    tl.store(Rstd + pid, rstd)

    for start in range(0, group_size, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        mask = offs < group_size
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        ch = g * ch_per_group + offs // HW
        w = tl.load(W + ch, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(B + ch, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + offs, (x - mean) * rstd * w + b, mask=mask)


@tad.autodiff(grad_inputs=("x", "weight", "bias"))
def group_norm(x, weight, bias, num_groups, eps=1e-5):
    N, C, HW = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(N, num_groups, dtype=torch.float32, device=x.device)
    rstd = torch.empty(N, num_groups, dtype=torch.float32, device=x.device)
    block = 32
    _group_norm_fwd[(N * num_groups,)](x, y, weight, bias, mean, rstd, x.stride(0), y.stride(0),
                                       C, HW, num_groups, eps, BLOCK_SIZE=block,
                                       num_warps=4)
    return y


# Groups of 1200, 800 and 544 elements: 38, 25 and 17 iterations of 32 (the last leaves the last
# program of the 8 an empty share); one of 40 elements does not split.
SWEEP = [
    {"N": 2, "C": 8, "HW": 300, "G": 2},
    {"N": 3, "C": 12, "HW": 200, "G": 3},
    {"N": 1, "C": 4, "HW": 136, "G": 1},
    {"N": 2, "C": 8, "HW": 20, "G": 4},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    N, C, HW = dims["N"], dims["C"], dims["HW"]
    x = torch.randn(N, C, HW, dtype=dtype, device=device)
    weight = 1.0 + 0.1 * torch.randn(C, dtype=dtype, device=device)
    bias = 0.1 * torch.randn(C, dtype=dtype, device=device)
    return (x, weight, bias), {"num_groups": dims["G"], "eps": 1e-5}


def reference(x, weight, bias, num_groups, eps=1e-5):
    return torch.nn.functional.group_norm(x, num_groups, weight, bias, eps)

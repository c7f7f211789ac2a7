"""Group norm with each group's offset written into every load and store inside the loops (no
pointer advanced before them): the backward's per-channel dW and dB runs are built while the
segments' rewrite appends values, and the run's zero tile must keep its tile type (a reference into
the growing value list read freed memory: the run became a scalar and the module did not compile;
segment_atomics.cpp, a review's probe)."""
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

    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, group_size, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(X + n.to(tl.int64) * stride_xn + g * group_size + offs, mask=offs < group_size, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / group_size

    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, group_size, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        mask = offs < group_size
        x = tl.load(X + n.to(tl.int64) * stride_xn + g * group_size + offs, mask=mask, other=0.0).to(tl.float32)
        xc = tl.where(mask, x - mean, 0.0)
        acc += xc * xc
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / group_size + eps)
    tl.store(Mean + pid, mean)
    tl.store(Rstd + pid, rstd)

    for start in range(0, group_size, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        mask = offs < group_size
        x = tl.load(X + n.to(tl.int64) * stride_xn + g * group_size + offs, mask=mask, other=0.0).to(tl.float32)
        ch = g * ch_per_group + offs // HW
        w = tl.load(W + ch, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(B + ch, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + n.to(tl.int64) * stride_yn + g * group_size + offs, (x - mean) * rstd * w + b, mask=mask)


@tad.autodiff(grad_inputs=("x", "weight", "bias"))
def group_norm(x, weight, bias, num_groups, eps=1e-5):
    N, C, HW = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(N, num_groups, dtype=torch.float32, device=x.device)
    rstd = torch.empty(N, num_groups, dtype=torch.float32, device=x.device)
    block = min(triton.next_power_of_2(C // num_groups * HW), 1024)
    _group_norm_fwd[(N * num_groups,)](x, y, weight, bias, mean, rstd, x.stride(0), y.stride(0),
                                       C, HW, num_groups, eps, BLOCK_SIZE=block,
                                       num_warps=4)
    return y


SWEEP = [{"N": 2, "C": 8, "HW": 50, "G": 4}, {"N": 2, "C": 32, "HW": 300, "G": 8}, {"N": 2, "C": 6, "HW": 7, "G": 2}, {"N": 2, "C": 64, "HW": 1, "G": 2}, {"N": 3, "C": 12, "HW": 33, "G": 3}]


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


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["N"] * dims["C"] * dims["HW"]
    # fwd reads x three times and writes y; bwd reads x and dy twice and writes dx.
    return n * item * (4 if mode == "fwd" else 5)

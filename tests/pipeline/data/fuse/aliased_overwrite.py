"""One tensor passed as X and Y, Y[r, 0] overwritten between two row loops: the backward zeroes the
shadow of Y between its loops, which is the shadow of X that the second loop adds to, so the loops
must not fuse past that store (a review found the fused form wrong: fuse_loops.h)."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _alias_fwd(X, Y, Z, W, Q, Out1, Out2, n, stride, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        acc += tl.load(X + r * stride + idx, mask=idx < n, other=0.0)
    tl.store(Out1 + r, tl.sum(acc, axis=0))
    # X's row has been read in full: overwrite its first element through the alias Y.
    tl.store(Y + r * stride, tl.load(W + r) * 2.0)
    q = tl.load(Q + r)
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        z = tl.load(Z + r * stride + idx, mask=idx < n, other=0.0)
        acc2 += z * q
    tl.store(Out2 + r, tl.sum(acc2, axis=0))


@tad.autodiff(grad_inputs=("x", "z", "w", "q"))
def alias_fuse(x, z, w, q):
    R, n = x.shape
    out1 = torch.empty(R, dtype=torch.float32, device=x.device)
    out2 = torch.empty(R, dtype=torch.float32, device=x.device)
    _alias_fwd[(R,)](x, x, z, w, q, out1, out2, n, x.stride(0), BLOCK=16)
    return x, out1, out2


SWEEP = [{"R": 3, "n": 40}]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    R, n = dims["R"], dims["n"]
    x = torch.randn(R, n, dtype=dtype, device=device)
    z = torch.randn(R, n, dtype=dtype, device=device)
    w = torch.randn(R, dtype=dtype, device=device)
    q = torch.randn(R, dtype=dtype, device=device)
    return (x, z, w, q), {}


def reference(x, z, w, q):
    out1 = x.sum(1)
    out2 = (z * q[:, None]).sum(1)
    y = x.clone()
    y[:, 0] = w * 2.0
    return y, out1, out2

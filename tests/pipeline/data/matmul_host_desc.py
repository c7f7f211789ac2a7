"""C = A @ B with host-side tensor descriptors: the stub builds a TensorDescriptor per operand and
passes it to the kernel, which reads and writes tiles by offsets (out-of-bounds lanes read zero and
are not written)."""
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

import tad


@triton.jit
def _matmul_hd_fwd(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([k, off_n]), acc)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@tad.autodiff(grad_inputs=("a", "b"))
def matmul_host_desc(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    block_m, block_n, block_k = 32, 32, 16
    a_desc = TensorDescriptor.from_tensor(a, [block_m, block_k])
    b_desc = TensorDescriptor(b, b.shape, b.stride(), [block_k, block_n])
    c_desc = TensorDescriptor.from_tensor(c, block_shape=[block_m, block_n])
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n))
    _matmul_hd_fwd[grid](a_desc, b_desc, c_desc, K, BLOCK_M=block_m, BLOCK_N=block_n,
                         BLOCK_K=block_k)
    return c


SWEEP = [
    {"M": 37, "N": 24, "K": 40},
    {"M": 70, "N": 48, "K": 24},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    a = torch.randn(dims["M"], dims["K"], dtype=dtype, device=device) / dims["K"] ** 0.5
    b = torch.randn(dims["K"], dims["N"], dtype=dtype, device=device)
    return (a, b), {}


def reference(a, b):
    return a @ b

"""C = A @ B through device-side tensor descriptors: every access is a tile at element offsets, and
out-of-bounds lanes read zero and are not written, so no masks appear in the kernel."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _matmul_td_fwd(A, B, C, M, N, K, stride_am, stride_bk, stride_cm, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    # A descriptor's last dim must be contiguous: its stride is the literal 1.
    a_desc = tl.make_tensor_descriptor(A, shape=[M, K], strides=[stride_am, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(B, shape=[K, N], strides=[stride_bk, 1],
                                       block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(C, shape=[M, N], strides=[stride_cm, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([off_m, k])
        b = b_desc.load([k, off_n])
        acc = tl.dot(a, b, acc)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


def _descriptor_scratch(size, alignment, stream):
    # Descriptors built on the device live in global scratch memory that triton asks for here.
    return torch.empty(size, device="cuda", dtype=torch.int8)


@tad.autodiff(grad_inputs=("a", "b"))
def matmul_tensor_desc(a, b):
    M, K = a.shape
    _, N = b.shape
    # The hardware reads rows of 16-byte multiples from a contiguous last dim.
    assert a.stride(1) == 1 and b.stride(1) == 1, "tensor descriptors need a contiguous last dim"
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    triton.set_allocator(_descriptor_scratch)
    block_k = 64 if a.element_size() <= 2 else 32
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    _matmul_td_fwd[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=128,
                         BLOCK_N=128, BLOCK_K=block_k, num_warps=8, num_stages=3)
    return c


# Row strides must be multiples of 16 bytes, so N and K are multiples of 8; they are not multiples
# of the blocks, so the first two entries read and write past the tensors' edges.
SWEEP = [
    {"M": 37, "N": 24, "K": 40},
    {"M": 130, "N": 104, "K": 152},
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 8192, "K": 8192, "required": False},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    M, N, K = dims["M"], dims["N"], dims["K"]
    a = torch.randn(M, K, dtype=dtype, device=device) / K ** 0.5
    b = torch.randn(K, N, dtype=dtype, device=device)
    return (a, b), {}


def reference(a, b):
    return a @ b


def flops(dims, mode):
    f = 2 * dims["M"] * dims["N"] * dims["K"]
    return f if mode == "fwd" else 2 * f

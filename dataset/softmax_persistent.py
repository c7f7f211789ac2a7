"""Row softmax by a persistent kernel: a fixed number of programs, each taking rows pid, pid + P,
... with a software-pipelined tl.range loop, the whole row in one block (rows up to a few thousand
wide), as in attention-score and router softmaxes."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _softmax_persistent_fwd(X, Y, M, N, stride_x, stride_y, BLOCK_N: tl.constexpr,
                            NUM_STAGES: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    for row in tl.range(tl.program_id(0), M, tl.num_programs(0), num_stages=NUM_STAGES):
        x = tl.load(X + row * stride_x + cols, mask=mask, other=float("-inf")).to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0))
        y = e / tl.sum(e, axis=0)
        tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("x",))
def softmax_persistent(x):
    M, N = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(N)
    programs = 4  # on the CPU each program still gets several rows
    if x.device.type == "cuda":
        programs = 4 * torch.cuda.get_device_properties(x.device).multi_processor_count
    _softmax_persistent_fwd[(min(M, programs),)](x, y, M, N, x.stride(0), y.stride(0),
                                                 BLOCK_N=block, NUM_STAGES=2,
                                                 num_warps=min(max(block // 256, 1), 8))
    return y


SWEEP = [
    {"M": 11, "N": 50},
    {"M": 6, "N": 700},
    {"M": 32768, "N": 1024},
    {"M": 8192, "N": 4096},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    return (torch.randn(dims["M"], dims["N"], dtype=dtype, device=device),), {}


def reference(x):
    return torch.softmax(x, dim=-1)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    # fwd: x in, y out; bwd: y (or x), dy in, dx out.
    return dims["M"] * dims["N"] * item * (2 if mode == "fwd" else 3)

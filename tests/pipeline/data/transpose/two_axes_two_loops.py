"""A grid of (R, R) programs over two loops: W's row j gets adds in both loops, shared along grid
axis 0; A's row i in both, shared along grid axis 1; V's row j in the first only. Each buffer's adds
must be summed by one transposed kernel: two kernels that each store W would overwrite each other
(a review's probe, before the grouping kept a buffer's adds on one axis together)."""
import torch
import triton
import triton.language as tl
import tad


@triton.jit
def _k(W, V, A, Y, R, N, BLOCK_N: tl.constexpr):
    i = tl.program_id(0)
    j = tl.program_id(1)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, N // 2, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        w = tl.load(W + j * N + cols, mask=cols < N, other=0.0)
        v = tl.load(V + j * N + cols, mask=cols < N, other=0.0)
        a = tl.load(A + i * N + cols, mask=cols < N, other=0.0)
        acc += w * v * a
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        w = tl.load(W + j * N + cols, mask=cols < N, other=0.0)
        a = tl.load(A + i * N + cols, mask=cols < N, other=0.0)
        acc += w * a * a
    tl.store(Y + i * R + j, tl.sum(acc, axis=0))


@tad.autodiff(grad_inputs=("w", "v", "a"))
def k(w, v, a):
    R, N = w.shape
    y = torch.empty(R, R, dtype=w.dtype, device=w.device)
    _k[(R, R)](w, v, a, y, R, N, BLOCK_N=4)
    return y


DTYPES = [torch.float32]
SWEEP = [{"R": 3, "N": 8}, {"R": 4, "N": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    R, N = dims["R"], dims["N"]
    return tuple(torch.randn(R, N, dtype=dt, device=dev) for _ in range(3)), {}

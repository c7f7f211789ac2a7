"""out[i, j] = sum_c W[j, c] (A[i, c] + V[j, c] A[i, c]^2) + sum_c W[i, c] B[j, c]^2 over a grid of
(R, R) programs in two loops: W's adds in the first loop are shared along grid axis 0, in the second
along grid axis 1, so no one transposed kernel sums them; W stays atomic (a review's probe: two
kernels each stored W)."""
import torch
import triton
import triton.language as tl
import tad


@triton.jit
def _k(W, V, A, B, Y, R, N, BLOCK_N: tl.constexpr):
    i = tl.program_id(0)
    j = tl.program_id(1)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        w = tl.load(W + j * N + cols, mask=cols < N, other=0.0)
        v = tl.load(V + j * N + cols, mask=cols < N, other=0.0)
        a = tl.load(A + i * N + cols, mask=cols < N, other=0.0)
        acc += w * a + v * a * a * w
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        w = tl.load(W + i * N + cols, mask=cols < N, other=0.0)
        b = tl.load(B + j * N + cols, mask=cols < N, other=0.0)
        acc += w * b * b
    tl.store(Y + i * R + j, tl.sum(acc, axis=0))


@tad.autodiff(grad_inputs=("w", "v", "a", "b"))
def k(w, v, a, b):
    R, N = w.shape
    y = torch.empty(R, R, dtype=w.dtype, device=w.device)
    _k[(R, R)](w, v, a, b, y, R, N, BLOCK_N=4)
    return y


DTYPES = [torch.float32]
SWEEP = [{"R": 3, "N": 8}, {"R": 4, "N": 16}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    R, N = dims["R"], dims["N"]
    return tuple(torch.randn(R, N, dtype=dt, device=dev) for _ in range(4)), {}

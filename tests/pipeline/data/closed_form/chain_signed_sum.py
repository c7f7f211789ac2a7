"""An online softmax in two loops, a chain: the first loop's l adds rowsum(p * w) with w < 0, the
second rowsum(p), so l ends negative while out = a / l stays finite. The closed form holds, but
m + log(l) is no logsumexp to save for the backward (it would be NaN)."""
import torch
import triton
import triton.language as tl
import tad


@triton.jit
def _k(X, W, V, OUT, M, N, S1, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    a_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    for start in range(0, S1, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        msk = (rows[:, None] < M) & (cols[None, :] < S1)
        x = tl.load(X + rows[:, None] * stride_m + cols[None, :], mask=msk, other=-1.0e6)
        w = tl.load(W + rows[:, None] * stride_m + cols[None, :], mask=msk, other=0.0)
        v = tl.load(V + rows[:, None] * stride_m + cols[None, :], mask=msk, other=0.0)
        m_new = tl.maximum(m_i, tl.max(x, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(x - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p * w, 1)
        a_i = a_i * alpha + tl.sum(p * v, 1)
        m_i = m_new
    for start in range(S1, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        msk = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(X + rows[:, None] * stride_m + cols[None, :], mask=msk, other=-1.0e6)
        v = tl.load(V + rows[:, None] * stride_m + cols[None, :], mask=msk, other=0.0)
        m_new = tl.maximum(m_i, tl.max(x, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(x - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        a_i = a_i * alpha + tl.sum(p * v, 1)
        m_i = m_new
    tl.store(OUT + rows, a_i / l_i, mask=rows < M)


@tad.autodiff(grad_inputs=("x", "v"))
def k(x, w, v, s1):
    M, N = x.shape
    out = torch.empty(M, dtype=x.dtype, device=x.device)
    _k[(triton.cdiv(M, 4),)](x, w, v, out, M, N, s1, x.stride(0), BLOCK_M=4, BLOCK_N=8)
    return out


SWEEP = [{"M": 4, "N": 24, "s1": 16}, {"M": 6, "N": 40, "s1": 8}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    M, N = dims["M"], dims["N"]
    x = torch.randn(M, N, dtype=dt, device=dev)
    w = -3.0 * (torch.rand(M, N, dtype=dt, device=dev) + 1.0)
    v = torch.randn(M, N, dtype=dt, device=dev)
    return (x, w, v, dims["s1"]), {}

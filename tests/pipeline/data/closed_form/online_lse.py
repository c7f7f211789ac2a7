"""Row logsumexp of X [M, N] in column chunks with an online maximum, in base e: the closed form's
case without a dot (l = Σ exp(x - M) is the only rescaled value; the output m + log(l) does not
depend on M). With RETURN_MAX the stub returns the running maximum itself, which does: the closed
form is refused and the loop is reversed by recomputation, still correctly."""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _lse_fwd(X, LSE, MAX, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    s_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        # Rows past M read zeros, so that their maximum stays finite; columns past N read -inf.
        x = tl.load(X + rows[:, None] * stride_m + cols[None, :], mask=(rows[:, None] < M) & (cols[None, :] < N),
                    other=float("-inf"))
        x = tl.where(rows[:, None] < M, x, 0.0)
        m_new = tl.maximum(m_i, tl.max(x, axis=1))
        s_i = s_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(x - m_new[:, None]), axis=1)
        m_i = m_new
    tl.store(LSE + rows, m_i + tl.log(s_i), mask=rows < M)
    tl.store(MAX + rows, m_i, mask=rows < M)


@tad.autodiff(grad_inputs=("x",))
def online_lse(x, return_max=False):
    M, N = x.shape
    lse = torch.empty(M, dtype=x.dtype, device=x.device)
    mx = torch.empty(M, dtype=x.dtype, device=x.device)
    _lse_fwd[(triton.cdiv(M, 4),)](x, lse, mx, M, N, x.stride(0), BLOCK_M=4, BLOCK_N=8)
    return mx if return_max else lse


DTYPES = [torch.float32]
SWEEP = [{"M": 10, "N": 21}, {"M": 8, "N": 8}]


def make_args(dims):
    dev = dims.get("device", "cuda")
    dt = getattr(torch, dims.get("dtype", "float32"))
    return (torch.randn(dims["M"], dims["N"], dtype=dt, device=dev),), {"return_max": dims.get("max", False)}


def reference(x, return_max=False):
    return x.max(dim=1).values if return_max else torch.logsumexp(x, dim=1)

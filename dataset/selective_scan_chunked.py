"""A diagonal selective-scan recurrence (Mamba style), h_t = a_t h_{t-1} + x_t over time for
a, x, h [B, T, C] (h_{-1} = 0), chunk by chunk: each program owns BLOCK_C channels of one sequence
and walks time in chunks of CHUNK steps; within a chunk tl.associative_scan combines (decay,
input) pairs along time in parallel, and the chunk's last state carries into the next chunk.

tad has no derivative rule for a scan with this combine function, so TAD_DIFFERENTIATE_AS gives
the chunk step a differentiable definition with the same parameters and values:
h_t = exp(L_t) carry + sum_{s <= t} exp(L_t - L_s) x_s, L the cumulative sum of log a (decays are
positive). tad differentiates (and the CPU tier runs) the definition; the forward runs the scan.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _recur(a1, x1, a2, x2):
    # (a1, x1) then (a2, x2) maps h to a2 (a1 h + x1) + x2.
    return a1 * a2, a2 * x1 + x2


@triton.jit
def _chunk_step(a, x, carry, CHUNK: tl.constexpr):
    decay, h = tl.associative_scan((a, x), 0, _recur)
    return h + decay * carry[None, :]


@triton.jit
def _chunk_step_definition(a, x, carry, CHUNK: tl.constexpr):
    rows = tl.arange(0, CHUNK)[:, None]
    cum = tl.cumsum(tl.log(a), 0)
    h = tl.exp(cum) * carry[None, :]
    for s in tl.static_range(CHUNK):
        cum_s = tl.sum(tl.where(rows == s, cum, 0.0), axis=0)
        x_s = tl.sum(tl.where(rows == s, x, 0.0), axis=0)
        later = rows >= s
        # exp only of non-positive exponents: the untaken side stays finite for the backward.
        h += tl.where(later, tl.exp(tl.where(later, cum - cum_s[None, :], 0.0)), 0.0) * x_s[None, :]
    return h


TAD_DIFFERENTIATE_AS = {_chunk_step: _chunk_step_definition}


@triton.jit
def _selective_scan_fwd(A, X, H, T, C, stride_b, stride_t, CHUNK: tl.constexpr,
                        BLOCK_C: tl.constexpr):
    rows = tl.arange(0, CHUNK)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_ok = cols < C
    base = tl.program_id(0).to(tl.int64) * stride_b
    carry = tl.zeros([BLOCK_C], dtype=tl.float32)
    for t0 in range(0, T, CHUNK):
        ts = t0 + rows
        mask = (ts[:, None] < T) & col_ok[None, :]
        offs = base + ts[:, None] * stride_t + cols[None, :]
        # Steps past T decay by 1 and add 0, so the last row is the state at the chunk's end.
        a = tl.load(A + offs, mask=mask, other=1.0).to(tl.float32)
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        h = _chunk_step(a, x, carry, CHUNK)
        tl.store(H + offs, h.to(H.dtype.element_ty), mask=mask)
        carry = tl.sum(tl.where(rows[:, None] == CHUNK - 1, h, 0.0), axis=0)


@tad.autodiff(grad_inputs=("a", "x"))
def selective_scan_chunked(a, x):
    B, T, C = x.shape
    h = torch.empty_like(x)
    block_c = min(triton.next_power_of_2(C), 64)
    # a, x and h share one contiguous layout.
    _selective_scan_fwd[(B, triton.cdiv(C, block_c))](a, x, h, T, C, x.stride(0), x.stride(1),
                                                      CHUNK=16, BLOCK_C=block_c)
    return h


SWEEP = [
    {"B": 2, "T": 37, "C": 20},
    {"B": 1, "T": 50, "C": 70},
    # The backward recomputes the carried state chunk by chunk: O((T / CHUNK)^2) chunk steps.
    {"B": 4, "T": 1024, "C": 512},
    {"B": 2, "T": 2048, "C": 256},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    shape = (dims["B"], dims["T"], dims["C"])
    # Decays in (0.8, 0.99) keep h bounded and old steps' gradients measurable.
    a = (0.8 + 0.19 * torch.rand(shape, device=device)).to(dtype)
    x = torch.randn(shape, dtype=dtype, device=device)
    return (a, x), {}


def reference(a, x):
    h = torch.zeros_like(x[:, 0])
    hs = []
    for t in range(x.shape[1]):
        h = a[:, t] * h + x[:, t]
        hs.append(h)
    return torch.stack(hs, dim=1)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["B"] * dims["T"] * dims["C"]
    # fwd: a, x in, h out; bwd: a, x, dh in, da, dx out.
    return n * item * (3 if mode == "fwd" else 5)

"""The gated linear recurrence h_t = a_t h_{t-1} + x_t (h_{-1} = 0) over a long time axis, split
into chunks so that the chunks run in parallel, in three launches:

  local  (grid NC x C-blocks x B): each chunk scans from zero, storing its local states u_t and the
         decay products P_t = a_{start} ... a_t, and its last u and P per chunk;
  carry  (grid C-blocks x B):      walks the chunks in order, storing the state entering each chunk,
         carry_c = P_last(c-1) carry_{c-1} + u_last(c-1), carry_0 = 0;
  combine (grid T-blocks x C-blocks x B): h_t = u_t + P_t carry_{chunk(t)}.

a, x, h [B, T, C]; every intermediate is a float32 buffer the stub allocates.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _chunk_local_scan(A, X, U, P, LastU, LastP, T, C, stride_b, stride_t, stride_lb, stride_lc,
                      CHUNK: tl.constexpr, BLOCK_C: tl.constexpr):
    c = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    b = tl.program_id(2)
    col_ok = cols < C
    base = b.to(tl.int64) * stride_b + cols
    u = tl.zeros([BLOCK_C], dtype=tl.float32)
    p = tl.full([BLOCK_C], 1.0, dtype=tl.float32)
    for i in range(0, CHUNK):
        t = c * CHUNK + i
        mask = col_ok & (t < T)
        # Steps past T decay by 1 and add 0, leaving the chunk's last state as it was.
        a = tl.load(A + base + t * stride_t, mask=mask, other=1.0).to(tl.float32)
        x = tl.load(X + base + t * stride_t, mask=mask, other=0.0).to(tl.float32)
        u = a * u + x
        p = p * a
        tl.store(U + base + t * stride_t, u, mask=mask)
        tl.store(P + base + t * stride_t, p, mask=mask)
    last = b * stride_lb + c * stride_lc + cols
    tl.store(LastU + last, u, mask=col_ok)
    tl.store(LastP + last, p, mask=col_ok)


@triton.jit
def _chunk_carry(LastU, LastP, Carry, C, num_chunks, stride_lb, stride_lc, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    b = tl.program_id(1)
    col_ok = cols < C
    carry = tl.zeros([BLOCK_C], dtype=tl.float32)
    for c in range(0, num_chunks):
        offs = b * stride_lb + c * stride_lc + cols
        tl.store(Carry + offs, carry, mask=col_ok)
        u = tl.load(LastU + offs, mask=col_ok, other=0.0)
        p = tl.load(LastP + offs, mask=col_ok, other=0.0)
        carry = p * carry + u


@triton.jit
def _chunk_combine(U, P, Carry, H, T, C, stride_b, stride_t, stride_lb, stride_lc,
                   CHUNK: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    ts = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    b = tl.program_id(2)
    mask = (ts[:, None] < T) & (cols[None, :] < C)
    offs = b.to(tl.int64) * stride_b + ts[:, None] * stride_t + cols[None, :]
    u = tl.load(U + offs, mask=mask, other=0.0)
    p = tl.load(P + offs, mask=mask, other=0.0)
    carry = tl.load(Carry + b * stride_lb + (ts // CHUNK)[:, None] * stride_lc + cols[None, :],
                    mask=mask, other=0.0)
    tl.store(H + offs, (u + p * carry).to(H.dtype.element_ty), mask=mask)


@tad.autodiff(grad_inputs=("a", "x"))
def chunked_gated_scan(a, x, chunk=16):
    B, T, C = x.shape
    num_chunks = triton.cdiv(T, chunk)
    u = torch.empty(B, T, C, dtype=torch.float32, device=x.device)
    p = torch.empty(B, T, C, dtype=torch.float32, device=x.device)
    last_u = torch.empty(B, num_chunks, C, dtype=torch.float32, device=x.device)
    last_p = torch.empty(B, num_chunks, C, dtype=torch.float32, device=x.device)
    carry = torch.empty(B, num_chunks, C, dtype=torch.float32, device=x.device)
    h = torch.empty_like(x)
    block_c = min(triton.next_power_of_2(C), 128)
    # a, x, u, p and h are contiguous [B, T, C]; last_u, last_p and carry [B, NC, C].
    _chunk_local_scan[(num_chunks, triton.cdiv(C, block_c), B)](
        a, x, u, p, last_u, last_p, T, C, x.stride(0), x.stride(1), carry.stride(0),
        carry.stride(1), CHUNK=chunk, BLOCK_C=block_c)
    _chunk_carry[(triton.cdiv(C, block_c), B)](last_u, last_p, carry, C, num_chunks,
                                              carry.stride(0), carry.stride(1), BLOCK_C=block_c)
    _chunk_combine[(triton.cdiv(T, 16), triton.cdiv(C, block_c), B)](
        u, p, carry, h, T, C, x.stride(0), x.stride(1), carry.stride(0), carry.stride(1),
        CHUNK=chunk, BLOCK_T=16, BLOCK_C=block_c)
    return h


SWEEP = [
    {"B": 2, "T": 37, "C": 20, "chunk": 8},
    {"B": 1, "T": 70, "C": 150, "chunk": 16},
    {"B": 4, "T": 4096, "C": 1024, "chunk": 64},
    {"B": 2, "T": 8192, "C": 512, "chunk": 128},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    shape = (dims["B"], dims["T"], dims["C"])
    # Decays in (0.8, 0.99) keep h bounded and old steps' gradients measurable.
    a = (0.8 + 0.19 * torch.rand(shape, device=device)).to(dtype)
    x = torch.randn(shape, dtype=dtype, device=device)
    return (a, x), {"chunk": dims.get("chunk", 16)}


def reference(a, x, chunk=16):
    h = torch.zeros_like(x[:, 0])
    hs = []
    for t in range(x.shape[1]):
        h = a[:, t] * h + x[:, t]
        hs.append(h)
    return torch.stack(hs, dim=1)


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["B"] * dims["T"] * dims["C"]
    # fwd: a, x in, u, p out (fp32) and read back, h out; bwd about twice that.
    fwd = n * (3 * item + 16)
    return fwd if mode == "fwd" else 2 * fwd

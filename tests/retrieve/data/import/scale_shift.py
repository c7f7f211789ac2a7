# A pair written for tad's importer tests, in the sectioned fwd/bwd layout: y = x * scale + shift
# with per-column scale and shift over x [M, N].
import torch
import triton
import triton.language as tl

# ============================================================
# SHARED HELPERS (used by forward and backward)
# ============================================================


@triton.jit
def _column_offsets(BLOCK_N: tl.constexpr):
    return tl.arange(0, BLOCK_N)


# ============================================================
# FORWARD Triton Kernels
# ============================================================


@triton.jit
def _scale_shift_fwd(X, S, B, Y, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = _column_offsets(BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=0.0)
    s = tl.load(S + cols, mask=mask, other=0.0)
    b = tl.load(B + cols, mask=mask, other=0.0)
    tl.store(Y + row * N + cols, x * s + b, mask=mask)


# ============================================================
# BACKWARD Triton Kernels
# ============================================================


@triton.jit
def _scale_shift_bwd(X, S, DY, DX, DS, DB, M, N, BLOCK_N: tl.constexpr):
    cols = _column_offsets(BLOCK_N)
    mask = cols < N
    s = tl.load(S + cols, mask=mask, other=0.0)
    ds = tl.zeros([BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_N], dtype=tl.float32)
    for row in range(0, M):
        x = tl.load(X + row * N + cols, mask=mask, other=0.0)
        dy = tl.load(DY + row * N + cols, mask=mask, other=0.0)
        tl.store(DX + row * N + cols, dy * s, mask=mask)
        ds += dy * x
        db += dy
    tl.store(DS + cols, ds, mask=mask)
    tl.store(DB + cols, db, mask=mask)


# ============================================================
# autograd.Function Class Definition
# ============================================================


class ScaleShiftFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, shift):
        M, N = x.shape
        y = torch.empty_like(x)
        block = triton.next_power_of_2(N)
        _scale_shift_fwd[(M,)](x, scale, shift, y, N, BLOCK_N=block)
        ctx.save_for_backward(x, scale)
        ctx.block = block
        return y

    @staticmethod
    def backward(ctx, dy):
        x, scale = ctx.saved_tensors
        M, N = x.shape
        dx = torch.empty_like(x)
        dscale = torch.empty_like(scale)
        dshift = torch.empty_like(scale)
        _scale_shift_bwd[(1,)](x, scale, dy.contiguous(), dx, dscale, dshift, M, N, BLOCK_N=ctx.block)
        return dx, dscale, dshift

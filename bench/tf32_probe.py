# Which rounding tl.dot applies to float32 operands at its default (TF32) precision: prints the
# max difference from float64 products of the operands cut four ways, then two ties. Needs a GPU.
# Results: bench/results/2026-11-22-h100-issue3-session5.md; tad_verify.tf32 follows them.
import torch
import triton
import triton.language as tl


@triton.jit
def dot16(A, B, C):
    i = tl.arange(0, 16)
    a = tl.load(A + i[:, None] * 16 + i[None, :])
    b = tl.load(B + i[:, None] * 16 + i[None, :])
    tl.store(C + i[:, None] * 16 + i[None, :], tl.dot(a, b))


def cut(x, mode):
    """x's float32 bits with the low 13 mantissa bits cleared after rounding as `mode` says."""
    b = x.float().contiguous().view(torch.int32)
    if mode == "truncated":
        b = b & ~0x1FFF
    elif mode == "nearest, ties away":
        b = (b + 0x1000) & ~0x1FFF
    elif mode == "nearest, ties even":
        b = (b + 0xFFF + ((b >> 13) & 1)) & ~0x1FFF
    return b.view(torch.float32).double()


def main():
    torch.manual_seed(0)
    c = torch.empty(16, 16, device="cuda")
    for trial in range(3):
        a, b = torch.randn(16, 16, device="cuda"), torch.randn(16, 16, device="cuda")
        dot16[(1,)](a, b, c)
        for mode in ("unrounded", "truncated", "nearest, ties away", "nearest, ties even"):
            ref = cut(a, mode) @ cut(b, mode)
            print(f"trial {trial}, {mode}: {(c.double() - ref).abs().max().item():.3e}")
    eye = torch.eye(16, device="cuda")
    for value, note in ((1 + 2**-11, "1.0: truncated or ties even; 1 + 2^-10: ties away"),
                        (1 + 3 * 2**-11, "1 + 2^-10: truncated; 1 + 2^-9: nearest")):
        dot16[(1,)](torch.full((16, 16), value, device="cuda"), eye, c)
        print(f"{value!r} -> {c[0, 0].item()!r} ({note})")


if __name__ == "__main__":
    main()

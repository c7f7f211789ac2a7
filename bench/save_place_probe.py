"""Where a saved accumulator's store costs matmul_bias_act's forward (docs/saved-residuals.md): the
forward kernel (written here, as dataset/matmul_bias_act.py computes it) alone, 4096^3 float16,
timed with triton.testing.do_bench (median), with the float32 save of acc in each of four places,
and its registers. Run on the GPU machine: `python3 bench/save_place_probe.py` (one JSON line per
case; bench/results/2026-12-05-h200-session16.md has a run)."""
import json

import torch
import triton
import triton.language as tl


@triton.jit
def _gelu(x):
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))


@triton.jit
def fwd(A, B, Bias, C, S, M, N, K, sam, sak, sbk, sbn, scm, scn, MODE: tl.constexpr, ACT: tl.constexpr,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in tl.range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(A + rm[:, None] * sam + ks[None, :] * sak, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(B + ks[:, None] * sbk + rn[None, :] * sbn, mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * scm + rn[None, :] * scn
    if MODE == 1:  # right after the loop (as generated)
        tl.store(S + offs, acc, mask=mask)
    bias = tl.load(Bias + rn, mask=rn < N, other=0.0).to(tl.float32)
    z = acc + bias[None, :]
    if MODE == 2:  # z = acc + bias instead
        tl.store(S + offs, z, mask=mask)
    if ACT == "gelu":
        y = _gelu(z)
    else:
        y = tl.maximum(z, 0.0)
    tl.store(C + offs, y.to(C.dtype.element_ty), mask=mask)
    if MODE == 3:  # after the output's store
        tl.store(S + offs, z, mask=mask)
    if MODE == 4:  # half the bytes
        tl.store(S + offs, acc.to(tl.float16), mask=mask)


def run(act, mode, sdtype):
    M = N = K = 4096
    a = torch.randn(M, K, device="cuda", dtype=torch.float16) / 64
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    bias = torch.randn(N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    s = torch.empty(M, N, device="cuda", dtype=sdtype)
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    f = lambda: fwd[grid](a, b, bias, c, s, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                          c.stride(0), c.stride(1), MODE=mode, ACT=act, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32,
                          GROUP_M=8, num_warps=8, num_stages=3)
    f()
    ms = triton.testing.do_bench(f, warmup=25, rep=200, return_mode="median")
    k = fwd.warmup(a, b, bias, c, s, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                   c.stride(1), MODE=mode, ACT=act, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, num_warps=8,
                   num_stages=3, grid=grid)
    meta = {"n_regs": getattr(k, "n_regs", None), "n_spills": getattr(k, "n_spills", None),
            "shared": getattr(k.metadata, "shared", None) if hasattr(k, "metadata") else None}
    print(json.dumps({"act": act, "mode": mode, "ms": round(ms, 4), **meta}), flush=True)


for act in ("gelu", "relu"):
    for mode, sd in ((0, torch.float32), (1, torch.float32), (2, torch.float32), (3, torch.float32), (4, torch.float16)):
        try:
            run(act, mode, sd)
        except Exception as e:  # noqa: BLE001 -- one case failing to compile leaves the others
            print(json.dumps({"act": act, "mode": mode, "error": str(e)[:300]}), flush=True)

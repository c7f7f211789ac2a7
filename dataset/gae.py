"""Generalized advantage estimation (GAE) for reinforcement learning rollouts, computed backwards in
time as RL libraries do: for rewards r and episode ends d [T, B] and values v [T + 1, B] (the last
row bootstraps), delta_t = r_t + gamma (1 - d_t) v_{t+1} - v_t, A_t = delta_t + gamma lambda
(1 - d_t) A_{t+1}, and returns R_t = A_t + v_t.

Time-major layout: each program owns BLOCK_B environments (contiguous columns) and walks t from
T - 1 down to 0 with a negative range step, carrying A and v_{t+1}.
"""
import torch
import triton
import triton.language as tl

import tad


@triton.jit
def _gae_fwd(R, V, Done, Adv, Ret, T, B, stride_t, stride_vt, gamma, lam, BLOCK_B: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    ok = cols < B
    adv = tl.zeros([BLOCK_B], dtype=tl.float32)
    v_next = tl.load(V + T * stride_vt + cols, mask=ok, other=0.0).to(tl.float32)
    for t in range(T - 1, -1, -1):
        r = tl.load(R + t * stride_t + cols, mask=ok, other=0.0).to(tl.float32)
        v = tl.load(V + t * stride_vt + cols, mask=ok, other=0.0).to(tl.float32)
        alive = 1.0 - tl.load(Done + t * stride_t + cols, mask=ok, other=0.0).to(tl.float32)
        delta = r + gamma * alive * v_next - v
        adv = delta + gamma * lam * alive * adv
        tl.store(Adv + t * stride_t + cols, adv.to(Adv.dtype.element_ty), mask=ok)
        tl.store(Ret + t * stride_t + cols, (adv + v).to(Ret.dtype.element_ty), mask=ok)
        v_next = v


@tad.autodiff(grad_inputs=("rewards", "values"))
def gae(rewards, values, dones, gamma=0.99, lam=0.95):
    T, B = rewards.shape
    adv = torch.empty_like(rewards)
    ret = torch.empty_like(rewards)
    block_b = min(triton.next_power_of_2(B), 256)
    # rewards, dones, adv and ret share one contiguous [T, B] layout.
    _gae_fwd[(triton.cdiv(B, block_b),)](rewards, values, dones, adv, ret, T, B, rewards.stride(0),
                                          values.stride(0), gamma, lam, BLOCK_B=block_b)
    return adv, ret


SWEEP = [
    {"T": 37, "B": 20},
    {"T": 20, "B": 300},
    {"T": 512, "B": 8192},
    {"T": 1024, "B": 4096},
]


def make_args(dims):
    dtype = getattr(torch, dims.get("dtype", "float32"))
    device = dims.get("device", "cuda")
    T, B = dims["T"], dims["B"]
    rewards = torch.randn(T, B, dtype=dtype, device=device)
    values = torch.randn(T + 1, B, dtype=dtype, device=device)
    dones = (torch.rand(T, B, device=device) < 0.05).to(dtype)
    return (rewards, values, dones), {"gamma": 0.99, "lam": 0.95}


def reference(rewards, values, dones, gamma=0.99, lam=0.95):
    adv = torch.zeros_like(rewards[0])
    out = []
    for t in range(rewards.shape[0] - 1, -1, -1):
        alive = 1.0 - dones[t]
        delta = rewards[t] + gamma * alive * values[t + 1] - values[t]
        adv = delta + gamma * lam * alive * adv
        out.append(adv)
    adv = torch.stack(out[::-1])
    return adv, adv + values[:-1]


def bytes(dims, mode):
    item = torch.tensor([], dtype=getattr(torch, dims.get("dtype", "float32"))).element_size()
    n = dims["T"] * dims["B"]
    # fwd: rewards, values, dones in, advantages and returns out; bwd: dones and two cotangents in,
    # two gradients out.
    return n * item * (5 if mode == "fwd" else 5)

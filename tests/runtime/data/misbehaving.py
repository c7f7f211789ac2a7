# Forward file for the runtime tests' failure cases; dims["case"] picks how make_args misbehaves.
import os
import signal
import sys
import time

import torch
import triton
import triton.language as tl


@triton.jit
def _unused_kernel(X):
    pass


def copy(x):
    return x.clone()  # launches no kernel


def make_args(dims):
    case = dims.get("case")
    if case == "raise":
        raise ValueError("bad dims")
    if case == "hang":
        time.sleep(600)
    if case == "crash":
        print("about to crash", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    if case == "chatty":
        print("x" * 9999, file=sys.stderr, flush=True)
    return (torch.zeros(4, device=dims["device"]),), {}

"""Host cost of one training step's call: forward + backward of a generated module against PyTorch
eager autograd of the file's reference(), on tensors small enough that the GPU waits for the host.

    python3 bench/host_overhead.py FORWARD.py STUB DIMS_JSON DTYPE LABEL=MODULE.py [...] [--profile DIR]

Each variant runs `out = fn(**args); torch.autograd.grad(out, leaves, ones)` back to back, without
synchronising inside the loop, and reports the host's wall time per call in microseconds (median
of 7 runs of 200 calls), forward alone and forward + backward. With --profile, cProfile's top
functions of each generated variant go to DIR/<label>.txt. Prints one JSON line per variant.
"""
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time

import torch

from graph_bench import case, load, steps


def per_call_us(step, calls=200, runs=7):
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def profile(step, path):
    p = cProfile.Profile()
    p.enable()
    for _ in range(200):
        step()
    torch.cuda.synchronize()
    p.disable()
    out = io.StringIO()
    pstats.Stats(p, stream=out).sort_stats("tottime").print_stats(30)
    with open(path, "w") as f:
        f.write(out.getvalue())


def main(argv):
    profile_dir = None
    if "--profile" in argv:
        i = argv.index("--profile")
        profile_dir = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
        os.makedirs(profile_dir, exist_ok=True)
    forward_path, stub_name, dims, dtype = argv[1], argv[2], json.loads(argv[3]), argv[4]
    file, bound = case(forward_path, stub_name, dims, dtype)
    variants = [("eager", file.reference, False)]
    grad_names = None
    for spec in argv[5:]:
        label, path = spec.split("=", 1)
        module = load(path, "generated_" + label)
        grad_names = grad_names or list(module.GRAD_INPUTS)
        variants.append((label, module.forward, True))
    for label, fn, generated in variants:
        forward, both = steps(fn, bound, grad_names)
        fwd, total = per_call_us(torch.no_grad()(forward)), per_call_us(both)
        if profile_dir and generated:
            profile(both, os.path.join(profile_dir, label + ".txt"))
        print(json.dumps({"file": forward_path, "dims": dims, "dtype": dtype, "variant": label,
                          "fwd_us": round(fwd, 1), "fwd_bwd_us": round(total, 1)}), flush=True)


if __name__ == "__main__":
    main(sys.argv)

"""Which GPU kernels a generated forward + backward launches, and how long each takes: the
breakdown behind a graph_bench time (where a backward's time goes: its main kernel, a partial-sum
reduction, casts, fills).

    python3 bench/kernel_times.py FORWARD.py STUB DIMS_JSON DTYPE LABEL=MODULE.py [...]

Each variant runs forward + backward (as graph_bench.steps builds them) 5 times to warm up and tune,
then 20 times under torch.profiler, eagerly (a CUDA graph's replay hides its kernels from the
profiler), the L2 flushed before each. Prints one JSON line per variant: each kernel's name, its
launches per step and its mean device time per launch (us), and their sum per step; the sum beside
graph_bench's time shows what launch gaps cost.
"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import graph_bench

STEPS = 20


def kernel_times(fn, bound, grad_names):
    _, both = graph_bench.steps(fn, bound, grad_names)
    flush = torch.empty(graph_bench.FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    for _ in range(5):
        both()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(STEPS):
            flush.zero_()
            both()
        torch.cuda.synchronize()
    kernels = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            k = kernels.setdefault(e.name, [0, 0.0])
            k[0] += 1
            k[1] += e.time_range.elapsed_us()
    # the flush's fill: one int32 fill per step (gradients are floats)
    rows = [{"kernel": name[:120], "per_step": n / STEPS, "us": round(t / n, 2)}
            for name, (n, t) in sorted(kernels.items(), key=lambda kv: -kv[1][1])]
    fill = next((r for r in rows if r["per_step"] >= 1 and "FillFunctor<int>" in r["kernel"]), None)
    if fill:
        rows.remove(fill)
    return rows


def main(argv):
    forward_path, stub_name, dims, dtype = argv[1], argv[2], json.loads(argv[3]), argv[4]
    graph_bench.install_tad_shim()
    file, bound = graph_bench.case(forward_path, stub_name, dims, dtype)
    for spec in argv[5:]:
        label, path = spec.split("=", 1)
        module = graph_bench.load(path, "generated_" + label)
        rows = kernel_times(module.forward, bound, list(module.GRAD_INPUTS))
        total = sum(r["per_step"] * r["us"] for r in rows)
        print(json.dumps({"file": forward_path, "dims": dims, "dtype": dtype, "variant": label,
                          "step_kernel_us": round(total, 2), "kernels": rows}), flush=True)


if __name__ == "__main__":
    main(sys.argv)

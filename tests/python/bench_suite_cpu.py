"""Runs bench/suite.py on CPU torch: Triton kernels through fake_triton.py, tensors made on the CPU
where the suite asks for "cuda", CUDA-graph timing replaced by one call (every time reads 1 ms),
no torch.compile where the installed torch has none. For test_bench_suite: the suite's plumbing
(checks, records, table, plot) without a GPU; its timings mean nothing.
    bench_suite_cpu.py SUITE_ARGS...
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fake_triton  # noqa: E402

fake_triton.install()
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import torch  # noqa: E402

import graph_bench  # noqa: E402
import refs._common  # noqa: E402
import suite  # noqa: E402


def on_cpu(make):
    def made(*args, **kwargs):
        if kwargs.get("device") == "cuda":
            kwargs["device"] = "cpu"
        return make(*args, **kwargs)
    return made


for name in ("randn", "randint", "empty", "zeros", "ones", "arange", "full"):
    setattr(torch, name, on_cpu(getattr(torch, name)))
torch.cuda.empty_cache = lambda: None
refs._common.sm_count = lambda device: 2
graph_bench.replay_ms = lambda fn, reps=100: (fn(), 1.0)[1]

if __name__ == "__main__":
    sys.exit(suite.main(sys.argv[1:]))

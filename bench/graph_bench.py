"""Times generated backwards the way docs/ say speed is measured: CUDA-graph replay, L2 flushed before
each replay, median; side by side in one process with PyTorch eager autograd of the file's
reference().

    python3 bench/graph_bench.py FORWARD.py STUB DIMS_JSON DTYPE LABEL=MODULE.py [LABEL=MODULE.py ...]

Each MODULE.py is a module `tad generate FORWARD.py -o MODULE.py` wrote (for example one per
TAD_GRID_REDUCTION mode). The backward alone is not capturable as a callable (autograd runs it),
so each variant is timed as forward + backward and as forward alone, both captured on one side
stream, and the backward is their difference. Prints one JSON line per variant (milliseconds; with
`tuned`, the choices of a module whose kernels the tuner timed: TAD_AUTOTUNE).
"""
import importlib.util
import inspect
import json
import os
import statistics
import sys

import torch

FLUSH_BYTES = 256 << 20  # more than the H100's 50 MB L2


def install_tad_shim():
    """Forward files `import tad`: without the binding, the worker's shim stands in for it."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(root, "src", "runtime", "python"))
    import tad_userfile
    tad_userfile.install_tad_shim()


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def replay_ms(fn, reps=100):
    """Median time of one replay of fn's CUDA graph, the L2 flushed before each replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    times = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def steps(fn, bound, grad_names):
    """(forward, forward + backward): fn on fresh leaves of the bound arguments, then the gradients
    of its outputs (ones) with respect to them. The ones are made by the first call, the warm-up's:
    filling them is not the backward's work (for an output as large as its input, a tenth of a norm's
    backward)."""
    args = dict(bound.arguments)
    leaves = []
    for name in grad_names:
        args[name] = args[name].detach().clone().requires_grad_(True)
        leaves.append(args[name])
    dys = []

    def forward():
        return fn(**args)

    def both():
        out = forward()
        outs = out if isinstance(out, tuple) else (out,)
        outs = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
        if not dys:
            dys.extend(torch.ones_like(o) for o in outs)
        return torch.autograd.grad(outs, leaves, dys)

    return forward, both


def variant_ms(fn, bound, grad_names):
    """(forward ms, forward + backward ms) of fn on fresh leaves of the bound arguments."""
    forward, both = steps(fn, bound, grad_names)

    with torch.no_grad():
        fwd = replay_ms(forward)
    return fwd, replay_ms(both)


def case(forward_path, stub_name, dims, dtype):
    """The forward file, and its stub's arguments from make_args (seed 0, on the GPU), bound."""
    file = load(forward_path, "forward_file")
    stub = getattr(file, stub_name)
    stub = getattr(stub, "__wrapped__", stub)
    torch.manual_seed(0)
    args, kwargs = file.make_args({**dims, "device": "cuda", "dtype": dtype})
    bound = inspect.signature(stub).bind(*args, **kwargs)
    bound.apply_defaults()
    return file, bound


def main(argv):
    forward_path, stub_name, dims, dtype = argv[1], argv[2], json.loads(argv[3]), argv[4]
    install_tad_shim()
    file, bound = case(forward_path, stub_name, dims, dtype)
    variants = [("eager reference", file.reference, None)] if hasattr(file, "reference") else []
    grad_names = None
    for spec in argv[5:]:
        label, path = spec.split("=", 1)
        module = load(path, "generated_" + label)
        grad_names = grad_names or list(module.GRAD_INPUTS)
        variants.append((label, module.forward, getattr(module, "tad_tuned", None)))
    for label, fn, *tuned in variants:
        fwd, both = variant_ms(fn, bound, grad_names)
        line = {"file": forward_path, "dims": dims, "dtype": dtype, "variant": label,
                "fwd_ms": round(fwd, 4), "fwd_bwd_ms": round(both, 4), "bwd_ms": round(both - fwd, 4)}
        if tuned and tuned[0] and tuned[0]():
            line["tuned"] = [{k: c[k] for k in ("kernel", "options", "ms", "launched_ms") if k in c}
                             for c in tuned[0]()]
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv)

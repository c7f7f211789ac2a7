"""The worker's bench command: times the stub's forward and the generated backward.

Backward timings exclude the forward: the graph is built once and torch.autograd.grad(...,
retain_graph=True) is timed. A stub that updates its inputs in place is timed on them call after
call (each forward runs on the previous one's result). The file's reference() is timed the same way, eager and through
torch.compile (null when compiling fails). `timer(fn) -> ms` is supplied by the worker
(triton.testing.do_bench on the GPU). bench does not verify: verify first. The backward's kernels
are tuned on the first (untimed) call unless TAD_AUTOTUNE says otherwise (module_runtime.py);
`tuned` lists the choices made for the case (the module's tad_tuned()).
"""

import itertools
import time

import torch

import tad_userfile as userfile
from tad_verify import (failed_case, grad_leaves, release_memory, seeded_randn,
                        tensor_outputs)

# Every entry has these keys; null where not measured (no reference(), no bytes(), an error).
MEASUREMENTS = ("fwd_ms", "bwd_ms", "ref_bwd_ms", "compiled_ref_bwd_ms", "fwd_gbps", "bwd_gbps",
                "fwd_tflops", "bwd_tflops")


def bench(module, stub, generated, dims_list, dtypes, grad_inputs, device, timer, progress):
    cases = list(itertools.product(dims_list, dtypes))
    entries = []
    for k, (dims, dtype) in enumerate(cases):
        progress(f"bench {k + 1}/{len(cases)}: {dims} {dtype}", k / len(cases))
        entry = {"dims": dims, "dtype": dtype, "message": None,
                 **{key: None for key in MEASUREMENTS}}
        start = time.perf_counter()
        try:
            entry.update(_measure(module, stub, generated, {**dims, "dtype": dtype}, grad_inputs,
                                  device, timer))
            entry["status"] = "ok"
        except Exception as e:
            entry["status"] = failed_case(entry, e, dims)
        entry["seconds"] = time.perf_counter() - start
        entries.append(entry)
        release_memory(device)
    return {"results": entries}


def _backward_fn(fn, bound, grad_inputs, dirty=()):
    """A callable running only the backward of fn(*bound) for a fixed random cotangent; `dirty`:
    the arguments fn updates in place (they get non-leaf copies)."""
    leaves = grad_leaves(bound, grad_inputs)
    call = userfile.fresh(bound, dirty)
    outs = [o for _, o in tensor_outputs(fn(*call.args, **call.kwargs)) if o.requires_grad]
    cots = [seeded_randn(o, 1 + i).to(o.dtype) for i, o in enumerate(outs)]
    return lambda: torch.autograd.grad(outs, leaves, cots, retain_graph=True)


def _time(timer, fn):
    fn()  # compiles (triton, torch.compile) outside the measurement
    return timer(fn)


def _measure(module, stub, generated, dims, grad_inputs, device, timer):
    torch.manual_seed(0)
    args, kwargs = userfile.make_args(module, {**dims, "device": device})
    plain = userfile.bind(stub, args, kwargs)
    result = {"fwd_ms": _time(timer, lambda: stub(*args, **kwargs))}
    tuned = getattr(generated, "tad_tuned", lambda: [])
    before = {(c["kernel"], c["key"]) for c in tuned()}
    result["bwd_ms"] = _time(timer, _backward_fn(
        generated.forward, userfile.bind(stub, args, kwargs), grad_inputs,
        getattr(generated, "DIRTY", ())))
    result["tuned"] = [c for c in tuned() if (c["kernel"], c["key"]) not in before]
    reference = getattr(module, "reference", None)
    if callable(reference):
        result["ref_bwd_ms"] = _time(timer, _backward_fn(
            reference, userfile.bind(stub, plain.args, plain.kwargs), grad_inputs))
        try:
            if hasattr(torch, "_dynamo"):
                torch._dynamo.reset()
            compiled = torch.compile(reference)
            result["compiled_ref_bwd_ms"] = _time(timer, _backward_fn(
                compiled, userfile.bind(stub, plain.args, plain.kwargs), grad_inputs))
        except Exception as e:
            result["compiled_ref_error"] = f"{type(e).__name__}: {e}"
    for mode, ms in (("fwd", result["fwd_ms"]), ("bwd", result["bwd_ms"])):
        if callable(getattr(module, "bytes", None)):
            result[f"{mode}_gbps"] = module.bytes(dict(dims), mode) / (ms * 1e-3) / 1e9
        if callable(getattr(module, "flops", None)):
            result[f"{mode}_tflops"] = module.flops(dict(dims), mode) / (ms * 1e-3) / 1e12
    return result

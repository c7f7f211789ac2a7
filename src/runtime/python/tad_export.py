"""The worker's export command (docs/aot.md, docs/worker-protocol.md): the cubins of a generated
backward, for tad_kernels_load and tad_launch_backward to run without Python.

For each dims entry and dtype the candidate module's forward and backward run on the GPU while every
launch of the backward kernels the plan names is recorded: the compiled kernel Triton returned and
the arguments it was launched with. Each distinct compiled kernel becomes a cubin file in the output
directory and an entry of the reply: its entry name, options, shared memory, scratch sizes, and per
parameter the type and specialization Triton gave it (its signature, constants and attributes),
checked against tad's model of Triton's calling convention (aot/signature.h), and the widths of
the entry's parameters as its PTX declares them. tad's support kernels (tad_aot_support.py) are
compiled for the exported dtypes alongside.
"""

import inspect
import itertools
import os
import re

import torch

import tad_aot_support as support
import tad_userfile as userfile
from tad_verify import grad_leaves, release_memory, seeded_randn, tensor_outputs

_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\((.*?)\)", re.S)
_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.([a-z])(\d+)(?:\s+\.ptr(?:\s+\.\w+)*(?:\s+\.align\s+\d+)?)?\s+"
                    r"[\w$]+(?:\[(\d+)\])?")


class ExportError(Exception):
    """What the export cannot do; the worker reports it as an error of kind `exception`."""


def entry_widths(ptx, name):
    """The bytes of each parameter of entry `name` in PTX text, in order."""
    for m in _ENTRY.finditer(ptx):
        if m.group(1) == name:
            return [int(bits) // 8 * int(count or 1) for _, bits, count in _PARAM.findall(m.group(2))]
    raise ExportError(f"the PTX of {name} has no .entry {name}")


def literal(value):
    """A constexpr's value as a Python literal (what aot::CubinParam::value holds)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float, str)):
        return repr(value)
    return str(value)


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


_TRITON_TYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "int8": "i8",
                 "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "i1"}


def expected(value, constexpr, specialize=True, align=True):
    """tad's model of the specialization Triton 3.6 gives an argument (aot/signature.h): (type,
    divisible, literal)."""
    if constexpr:
        return "constexpr", False, literal(value)
    if torch.is_tensor(value):
        return "*" + _TRITON_TYPES[_dtype_name(value)], align and value.data_ptr() % 16 == 0, None
    if isinstance(value, bool):
        return "u1", False, None
    if isinstance(value, int):
        if value == 1 and specialize:
            return "constexpr", False, "1"
        return ("i32" if -2 ** 31 <= value < 2 ** 31 else "i64"), specialize and value % 16 == 0, None
    if isinstance(value, float):
        return "fp32", False, None
    if value is None:
        return "constexpr", False, "None"
    raise ExportError(f"an argument of type {type(value).__name__} ({value!r})")


def _arguments(jit, args, kwargs):
    """The call's arguments by parameter name, defaults applied (launch options left out)."""
    params = inspect.signature(jit.fn).parameters
    bound = inspect.signature(jit.fn).bind(*args, **{k: v for k, v in kwargs.items() if k in params})
    bound.apply_defaults()
    return dict(bound.arguments)


def _params(jit, compiled, arguments):
    """Each parameter as Triton compiled it, checked against tad's model."""
    src = compiled.src
    constants = getattr(src, "constants", {}) or {}
    attrs = getattr(src, "attrs", {}) or {}
    out = []
    for i, (name, ty) in enumerate(src.signature.items()):
        p = jit.params[i]
        flags = dict(specialize=i not in getattr(jit, "do_not_specialize", ()) and
                     name not in getattr(jit, "do_not_specialize", ()),
                     align=i not in getattr(jit, "do_not_specialize_on_alignment", ()) and
                     name not in getattr(jit, "do_not_specialize_on_alignment", ()))
        want = expected(arguments[name], p.is_constexpr, **flags)
        if ty == "constexpr":
            value = constants.get((i,), constants.get(name, arguments[name]))
            got = ("constexpr", False, literal(value))
        else:
            divisible = any(a[0] == "tt.divisibility" and a[1] == 16 for a in attrs.get((i,), []))
            got = (ty, divisible, None)
        if got != want:
            raise ExportError(f"tad's model of Triton {_triton_version()}'s calling convention disagrees with "
                              f"it for argument {name} of {jit.fn.__name__}: tad expects {want}, Triton compiled "
                              f"{got}")
        entry = {"name": name, "type": got[0]}
        entry.update({"value": got[2]} if got[0] == "constexpr" else {"divisible": got[1]})
        out.append(entry)
    return out


def _triton_version():
    import triton

    return triton.__version__


def cubin_entry(jit, compiled, arguments, out_dir, name):
    """The manifest's form of one compiled kernel (aot::cubin_from_json), its cubin written."""
    md = compiled.metadata
    params = _params(jit, compiled, arguments)
    file = f"{name}-{_hash(compiled)[:16]}.cubin"
    with open(os.path.join(out_dir, file), "wb") as f:
        f.write(compiled.asm["cubin"])
    return {"file": file, "function": md.name, "num_warps": md.num_warps, "num_stages": md.num_stages,
            "num_ctas": md.num_ctas, "cluster_dims": list(getattr(md, "cluster_dims", (1, 1, 1)) or (1, 1, 1)),
            "shared": md.shared,
            "global_scratch_size": getattr(md, "global_scratch_size", 0) or 0,
            "global_scratch_align": getattr(md, "global_scratch_align", 1) or 1,
            "profile_scratch_size": getattr(md, "profile_scratch_size", 0) or 0,
            "profile_scratch_align": getattr(md, "profile_scratch_align", 1) or 1,
            "cooperative": bool(getattr(md, "launch_cooperative_grid", False)),
            "pdl": bool(getattr(md, "launch_pdl", False)),
            "params": params, "abi": entry_widths(compiled.asm["ptx"], md.name)}


def _hash(compiled):
    return getattr(compiled.metadata, "hash", None) or compiled.hash


class Recorder:
    """Records every launch of the named kernels of a generated module: the compiled kernel Triton's
    JITFunction.run returned, and the arguments. The module's kernels are _fit_shared_memory
    wrappers around triton.jit functions; `run` is patched on those instances only."""

    def __init__(self, generated, names):
        self.jits = {}
        for name in names:
            obj = getattr(generated, name, None)
            jit = getattr(obj, "kernel", obj)
            if jit is None or not hasattr(jit, "run"):
                raise ExportError(f"the candidate's module has no kernel {name}: regenerate it")
            self.jits[name] = jit
        self.calls = []

    def __enter__(self):
        for name, jit in self.jits.items():
            jit.run = self._recording(name, jit, jit.run)
        return self

    def __exit__(self, *exc):
        for jit in self.jits.values():
            del jit.run  # the class's method again

    def _recording(self, name, jit, run):
        def recorded(*args, grid, warmup, **kwargs):
            compiled = run(*args, grid=grid, warmup=warmup, **kwargs)
            if compiled is None:
                raise ExportError(f"Triton's JITFunction.run returned no compiled kernel for {name} "
                                  f"(tad_export needs Triton 3.6)")
            self.calls.append((name, jit, compiled, _arguments(jit, args, kwargs)))
            return compiled

        return recorded


def _run_backward(module, stub, generated, dims, grad_inputs, device):
    torch.manual_seed(0)
    args, kwargs = userfile.make_args(module, {**dims, "device": device})
    bound = userfile.fresh(userfile.bind(stub, args, kwargs), getattr(generated, "DIRTY", ()))
    leaves = grad_leaves(bound, grad_inputs)
    outs = [o for _, o in tensor_outputs(generated.forward(*bound.args, **bound.kwargs)) if o.requires_grad]
    cots = [seeded_randn(o, 1 + i).to(o.dtype) for i, o in enumerate(outs)]
    torch.autograd.grad(outs, leaves, cots)
    torch.cuda.synchronize()


def export(module, stub, generated, dims_list, dtypes, grad_inputs, kernels, out_dir, device, progress):
    import triton

    os.makedirs(out_dir, exist_ok=True)
    entries = {name: [] for name in kernels}
    seen = set()
    cases = list(itertools.product(dims_list, dtypes))
    # The exported cubins are those of the launch options as the stub gave them (docs/aot.md), and
    # the C executor picks among them as the module's shared-memory fallback would: no tuning, whose
    # trial launches the recorder would take for the backward's own.
    tuning = getattr(generated, "_AUTOTUNE", None)
    if tuning is not None:
        tuning[0] = "off"
    recorder = Recorder(generated, kernels)
    for k, (dims, dtype) in enumerate(cases):
        progress(f"export {k + 1}/{len(cases)}: {dims} {dtype}", k / (len(cases) + 1))
        with recorder:
            _run_backward(module, stub, generated, {**dims, "dtype": dtype}, grad_inputs, device)
        release_memory(device)
    for name, jit, compiled, arguments in recorder.calls:
        if _hash(compiled) not in seen:
            seen.add(_hash(compiled))
            entries[name].append(cubin_entry(jit, compiled, arguments, out_dir, name))
    progress("support kernels", len(cases) / (len(cases) + 1))
    torch_dtypes = [getattr(torch, d) for d in dtypes]
    for name, compiled, arguments in support.compile_variants(torch_dtypes, device):
        if _hash(compiled) not in seen:
            seen.add(_hash(compiled))
            jit = getattr(support, name)
            entries.setdefault(name, []).append(cubin_entry(jit, compiled, arguments, out_dir, name))
    major, minor = torch.cuda.get_device_capability()
    return {"triton": triton.__version__, "device": torch.cuda.get_device_name(), "capability": 10 * major + minor,
            "kernels": entries, "launches": len(recorder.calls)}

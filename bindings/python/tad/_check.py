"""@tad.autodiff's check on first use: the dot-product test of a generated module on a call's own
arguments, before the module's gradients are returned.

For each gradient input x_k, a random direction v_k (the others zero) through the module's forward
mode (`jvp`) gives <J_k v_k, u>; one pass through its backward (autograd through `forward`) with random
output cotangents u gives every (J^T u)_k and so <v_k, (J^T u)_k>. The two differentiate the same
function at the same point and agree up to rounding; a backward (or a forward mode) that is wrong for
x_k makes them differ. A draw of v_k that tests little is followed by another (WEAK). The comparison (rel_err, tolerances per dtype) is the worker's
(tad_dotcompare, copied into this package as tad/_dotcompare.py).

Every pass runs on copies of the call's tensors (their layouts and the aliasing between them kept),
from the same state of torch's random generators, which are restored afterwards: the caller's tensors,
their .grad and the random stream the call itself sees are as if no check had run.

Nothing here imports torch at import time; `import tad` stays light.
"""

import hashlib
import json
import math
import os
import sys
import time

from . import _tad

SEED = 0  # fixed: a check is reproducible, and it does not draw from torch's global generators
# A draw of v whose sums are small next to their terms' root sum of squares tests little: with
# <u, J v> = z * rss, z roughly standard normal, a wrong sign moves rel_err by about 2|z|, so about
# one draw in 100 would hide a sign flip from float16's tolerance (2e-2; 19 of 2000 seeds in
# test_check's sign-flip case), one in 50 from bfloat16's.
# A draw that passes with |z| < WEAK is followed by another one (new v, one more forward-mode pass;
# the backward's J^T u is reused), up to MAX_PROBES draws, each of which must pass: a sign flip then
# goes unseen only where every draw is weak and the last within the tolerance, ~0.2^3 * 0.4 rtol:
# float16 6e-5, bfloat16 2e-4. It costs about 0.25 forward-mode passes per gradient input on average.
WEAK, MAX_PROBES = 0.25, 4
MARKER_SUFFIX = ".checked.json"


class GradientCheckError(_tad.MismatchError):
    """The dot-product test found that a generated backward and its forward mode disagree on a call's
    arguments: the gradients of the inputs it names cannot be trusted. `report` holds the test per
    gradient input (see docs/python.md); `stub`, `key` and `module_path` say which specialization."""

    def __init__(self, message, report=None):
        super().__init__(message)
        self.report = report
        report = report or {}
        self.stub = report.get("stub")
        self.key = report.get("key")
        self.module_path = report.get("module")


GradientCheckError.__module__ = "tad"  # shown as tad.GradientCheckError, as tad.MismatchError is


class GradientCheckWarning(UserWarning):
    """A generated module was used without its check on first use having passed: it has no forward
    mode (JVP_UNSUPPORTED), or the test could not decide on this call's values. Make it an error with
    warnings.simplefilter("error", tad.GradientCheckWarning)."""


GradientCheckWarning.__module__ = "tad"


_OFF = ("0", "false", "no", "off")
_ON = ("1", "true", "yes", "on")


def enabled(check):
    """Whether to check: the environment's TAD_CHECK (0/1, false/true, no/yes, off/on) when set and
    not empty, else the decorator's `check`."""
    value = os.environ.get("TAD_CHECK", "").strip()
    if not value:
        return check
    if value.lower() in _OFF:
        return False
    if value.lower() in _ON:
        return True
    raise ValueError(f"TAD_CHECK={value!r}: expected 0 or 1 (also false/true, no/yes, off/on)")


# ---- the test ----

def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _tensors(result):
    values = result if isinstance(result, (tuple, list)) else (result,)
    return [(i, v) for i, v in enumerate(values) if _torch().is_tensor(v)]


def _torch():
    import torch
    return torch


def _storage(t):
    """t's memory: untyped (torch >= 2), else typed (torch 1.13, Debian's)."""
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()


def copy_arguments(bound):
    """A new binding whose tensors are copies, detached, with the same shape, strides and dtype, and
    sharing memory among themselves where the originals do (the same tensor twice, views of one
    buffer): the stub may write any argument in place, and these writes must reach copies only."""
    torch = _torch()
    tensors = {}  # id -> tensor, each distinct tensor once
    for value in bound.arguments.values():
        if torch.is_tensor(value):
            tensors.setdefault(id(value), value)
    by_storage = {}
    for t in tensors.values():
        by_storage.setdefault((t.device, _storage(t).data_ptr()), []).append(t)
    copies = {}
    with torch.no_grad():
        for group in by_storage.values():
            # One tensor: clone() keeps the strides of a dense tensor, and copies only its elements.
            # A typed storage (torch 1.13) holds one dtype: views of other dtypes are copied apart.
            if len(group) == 1 or (not hasattr(group[0], "untyped_storage")
                                   and len({t.dtype for t in group}) > 1):
                copies.update((id(t), t.detach().clone()) for t in group)
                continue
            storage = _storage(group[0]).clone()
            for t in group:
                copies[id(t)] = torch.empty(0, dtype=t.dtype, device=t.device).set_(
                    storage, t.storage_offset(), t.shape, t.stride())
    b = bound.signature.bind(*bound.args, **bound.kwargs)
    for name, value in b.arguments.items():
        if torch.is_tensor(value):
            b.arguments[name] = copies[id(value)]
    return b


class _SameRandomness:
    """Runs each pass from the random generators' state at construction (CPU and the CUDA devices of
    the call) and leaves them in that state: a stub drawing random numbers (dropout) draws the same
    ones in every pass, and the call after the check draws what it would have without it."""

    def __init__(self, bound):
        torch = _torch()
        self.devices = sorted({v.device.index if v.device.index is not None else torch.cuda.current_device()
                               for v in bound.arguments.values()
                               if torch.is_tensor(v) and v.device.type == "cuda"})

    def __call__(self):
        return _torch().random.fork_rng(devices=self.devices)


def _weak(jvp_parts, vjp_parts):
    """Whether both sums are under WEAK times the largest scale compare_reduced divides by."""
    scale = max(math.sqrt(sum(q for _, q in jvp_parts)), math.sqrt(sum(q for _, q in vjp_parts)))
    a, b = abs(sum(s for s, _ in jvp_parts)), abs(sum(s for s, _ in vjp_parts))
    return max(a, b) < WEAK * max(a, b, scale)


def run(module, bound, stub_name="stub", key=(), path=None, seed=SEED):
    """The dot-product test of generated `module` at the arguments `bound` (inspect.BoundArguments of
    the stub, defaults applied; left unchanged). The report: {"stub", "key", "module", "seed",
    "status", "inputs": [per gradient input {"name", "dtype", "shape", "jvp", "vjp", "rel_err",
    "rtol", "ok", "status", "probes"}], "seconds"}, an input's numbers those of its last draw of v
    (see WEAK); "status" is "pass", "fail" (an input's sums disagree, or
    one of them is not finite), "inconclusive" (both of an input's sums are not finite: NaN or inf at
    this point) or "unchecked" with "reason" (the module has no forward mode)."""
    torch = _torch()
    from . import _dotcompare

    report = {"stub": stub_name, "key": [list(k) for k in key], "module": path, "seed": seed}
    start = time.perf_counter()
    if getattr(module, "JVP_UNSUPPORTED", None) or not callable(getattr(module, "jvp", None)):
        report.update(status="unchecked", inputs=[],
                      reason=getattr(module, "JVP_UNSUPPORTED", None) or "the generated module has no jvp")
        return report
    dirty = tuple(getattr(module, "DIRTY", ()))
    tf32 = bool(getattr(module, "TF32", False))
    # Gradient inputs this call passes a floating-point tensor for (an optional one may be None).
    names = [n for n in module.GRAD_INPUTS
             if torch.is_tensor(bound.arguments.get(n)) and bound.arguments[n].is_floating_point()]
    same_randomness = _SameRandomness(bound)

    # Reverse mode: one pass, random cotangents u of the differentiable outputs.
    b = copy_arguments(bound)
    leaves = [b.arguments[n].requires_grad_() for n in names]
    for n, leaf in zip(names, leaves):
        if n in dirty:  # updated in place: autograd wants a non-leaf there
            b.arguments[n] = leaf.clone()
    with torch.enable_grad(), same_randomness():
        out = module.forward(*b.args, **b.kwargs)
    diff = [(i, o) for i, o in _tensors(out) if o.requires_grad]
    us = {i: _dotcompare.random_like(o, seed + 3000 + i) for i, o in diff}
    shapes = {i: tuple(o.shape) for i, o in diff}
    out_dtypes = {_dtype_name(o.dtype) for _, o in diff}
    grads = (torch.autograd.grad([o for _, o in diff], leaves, [us[i] for i, _ in diff], allow_unused=True)
             if diff and leaves else [None] * len(leaves))
    del out, b

    def jvp_parts(name, v):
        """<u, J v> of the direction v of gradient input `name` alone: one forward-mode pass."""
        b = copy_arguments(bound)
        with torch.no_grad(), same_randomness():
            _, tangents = module.jvp(*b.args, tangents={name: v}, **b.kwargs)
        tangents = tangents if isinstance(tangents, (tuple, list)) else (tangents,)
        parts = []
        for i, u in us.items():
            t = tangents[i] if i < len(tangents) else None
            if t is None:
                continue
            if tuple(t.shape) != shapes[i]:
                raise _tad.InternalError(f"{path}: jvp returned a tangent of shape {list(t.shape)} for "
                                         f"output {i} of shape {list(shapes[i])}")
            parts.append(_dotcompare.reduce(u.double() * t.double()))
        return parts

    entries = []
    for k, name in enumerate(names):
        x, g = bound.arguments[name], grads[k]
        # The loosest precision among the values compared: the input's and the outputs'.
        rtol = max(_dotcompare.tolerance(d, tf32) for d in {_dtype_name(x.dtype), *out_dtypes})
        for probe in range(MAX_PROBES):
            v = _dotcompare.random_like(x, seed + 4000 + k + 10007 * probe)
            vjp = [] if g is None else [_dotcompare.reduce(v.double() * g.double())]
            fwd = jvp_parts(name, v)
            entry = {"name": name, "dtype": _dtype_name(x.dtype), "shape": list(x.shape),
                     **_dotcompare.compare_reduced(fwd, vjp, rtol), "probes": probe + 1}
            if not entry["ok"] or not _weak(fwd, vjp):
                break
        both_nonfinite = entry["jvp"] is None and entry["vjp"] is None
        entry["status"] = "ok" if entry["ok"] else "inconclusive" if both_nonfinite else "fail"
        entries.append(entry)
    del grads, leaves
    statuses = {e["status"] for e in entries}
    report["status"] = "fail" if "fail" in statuses else "inconclusive" if "inconclusive" in statuses else "pass"
    report["inputs"] = entries
    report["seconds"] = time.perf_counter() - start
    return report


# ---- what the user reads ----

def describe_key(key):
    """`x: float32 2-d cuda tensor, eps: float` from a specialization key."""
    parts = []
    for entry in key:
        if len(entry) == 5 and entry[1] == "tensor":
            name, _, dtype, ndim, device = entry
            parts.append(f"{name}: {dtype} {ndim}-d {device} tensor")
        else:
            name, kind = entry[0], entry[-1]
            parts.append(f"{name}: {kind.removeprefix('builtins.')}")
    return ", ".join(parts)


def _number(x):
    return "not finite" if x is None else f"{x:.6g}"


def failure_message(report):
    bad = [e["name"] for e in report["inputs"] if e["status"] == "fail"]
    lines = [f"{report['stub']}: tad's generated backward and its forward mode disagree on the "
             f"gradient of {', '.join(bad)}: the gradients of {', '.join(bad)} cannot be trusted.",
             "Dot-product test on this call's arguments (<J v, u> through jvp, <v, J^T u> through the "
             "backward; v random per gradient input, u random per output):"]
    width = max(len(e["name"]) for e in report["inputs"])
    for e in report["inputs"]:
        rel = "not finite" if e["rel_err"] is None else f"{e['rel_err']:.3g}"
        lines.append(f"  {e['name']:<{width}}  {e['dtype']}{e['shape']}: <J v, u> = {_number(e['jvp'])}, "
                     f"<v, J^T u> = {_number(e['vjp'])}, rel err {rel} (tolerance {e['rtol']:g}): "
                     f"{e['status']}")
    lines += [f"Specialization: {describe_key(report['key'])}.",
              f"Generated module: {report['module']}.",
              "Later differentiable calls of this specialization raise this error again (this process).",
              "tad.Session.verify compares the gradients with the file's reference() to tell which mode "
              "is wrong. To use the module unchecked anyway: @tad.autodiff(..., check=False), or "
              "TAD_CHECK=0 in the environment."]
    return "\n".join(lines)


def unchecked_message(report):
    return (f"{report['stub']}: tad cannot check the generated backward for {describe_key(report['key'])} "
            f"({report['module']}): it has no forward mode ({report['reason']}); its gradients are used "
            "unchecked. tad.Session.verify checks them against the file's reference(). Silence this with "
            "@tad.autodiff(..., check=False) or TAD_CHECK=0.")


def inconclusive_message(report):
    names = [e["name"] for e in report["inputs"] if e["status"] == "inconclusive"]
    return (f"{report['stub']}: the check of tad's generated backward for {describe_key(report['key'])} "
            f"could not decide for {', '.join(names)}: both sides of the dot-product test are NaN or "
            "infinite at this call's arguments. This call's gradients are used unchecked; the next call "
            "checks again.")


# ---- what is remembered across processes ----

def environment(bound):
    """What a passing check holds for beyond the module's source: torch, triton and the devices."""
    torch = _torch()
    triton = sys.modules.get("triton")
    devices = set()
    for v in bound.arguments.values():
        if torch.is_tensor(v):
            if v.device.type == "cuda":
                index = v.device.index if v.device.index is not None else torch.cuda.current_device()
                major, minor = torch.cuda.get_device_capability(index)
                devices.add(f"{torch.cuda.get_device_name(index)} (sm_{major}{minor})")
            else:
                devices.add(v.device.type)
    return {"torch": torch.__version__, "triton": getattr(triton, "__version__", None),
            "devices": sorted(devices)}


def marker_file(module_path, env):
    """The file recording a passing check of the module at module_path in environment env, beside
    it: <hash>.<digest>.checked.json, the digest covering the module's contents and env (a module
    file replaced, another torch, triton or GPU: checked again)."""
    digest = hashlib.sha256()
    with open(module_path, "rb") as f:
        digest.update(f.read())
    digest.update(b"\0" + json.dumps(env, sort_keys=True).encode())
    stem = os.path.splitext(module_path)[0]
    return f"{stem}.{digest.hexdigest()[:16]}{MARKER_SUFFIX}"

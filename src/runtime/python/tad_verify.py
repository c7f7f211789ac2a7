"""The worker's verify command: gradients of a generated backward against reference gradients.

For each dims x dtype the generated module's forward runs on make_args' inputs, a random cotangent
is pulled back through its backward, and the result is compared with
  - the gradients of the file's reference() run in float64 on float64 copies of the inputs, or,
    without reference(),
  - the generated backward run in float64, itself checked against directional central finite
    differences of the stub in float64 (FD_DIRECTIONS random directions per gradient input), with
    the step and tolerance of the precision the stub really computes in (FD).
Errors are relative to the largest reference magnitude: max|g - r| / max(max|r|, TINY).
Where the generated module has forward mode (`jvp`), each case also gets the dot-product test
<J v, u> = <v, J^T u> of tad_dotcheck, which needs no reference.
"""

import contextlib
import gc
import itertools
import math
import os
import time

import torch

import tad_dotcheck as dotcheck
import tad_userfile as userfile
from tad_errors import error_of, log_error
from tad_trace import TadError, dtype_name, user_code

# Relative tolerance per dtype: a few ulps of accumulated rounding at each precision; bfloat16 has
# three fewer mantissa bits than float16, hence its looser bound.
RTOL = {"float64": 1e-6, "float32": 1e-3, "float16": 2e-2, "bfloat16": 5e-2}
# Central differences with step h err by rounding, ~eps*|f|/h, plus truncation, ~h^2*|f'''|: least
# near h = eps^(1/3), where the error is ~eps^(2/3) times the function's conditioning. A stub fed
# float64 may still compute in float32 (a kernel that loads with .to(tl.float32)), so eps is that of
# its effective precision (effective_precision). Per precision: (step relative to max(1, max|x|),
# relative tolerance).
#   float64: eps^(1/3) = 6e-6, eps^(2/3) = 4e-11; a strict tolerance with room for conditioning.
#   float32: eps^(1/3) = 4e-3, eps^(2/3) = 1.5e-5; smooth functions of up to 1M elements computed
#            in float32 measured errors up to 2e-3 (row-wise logsumexp), hence 5e-3. Reductions of
#            everything to one scalar condition worse: such files need a reference().
FD = {"float64": (1e-5, 1e-5), "float32": (4e-3, 5e-3)}
# Where a direction disagrees at the step above, the steps (as fractions of it) tried after it: in
# float64 two smaller ones, as a step across a kink measures the kink; in float32 none, as rounding
# grows as the step shrinks.
FD_STEPS = {"float64": (1.0, 0.1, 0.01), "float32": (1.0,)}
FD_DIRECTIONS = 2
NOT_FINITE = "the gradient or the finite differences of the stub are not finite"
TINY = 1e-30
# Against a reference(), in a 16-bit or float32 test dtype, a gradient may also be as far from the
# float64 gradients as PyTorch's own, reference() run eagerly in the test dtype, is, up to
# EAGER_FACTOR times that (`eager_rel_err`), and never beyond EAGER_CAP times rtol. Kinks are why:
# relu's gradient flips wherever the test dtype and float64 disagree on the sign of a
# pre-activation near 0, in eager PyTorch as in a generated kernel, and one flip in a row of a
# matmul moves that row of the input gradient by about 1/sqrt(K) relative.
EAGER_FACTOR, EAGER_CAP = 2.0, 10.0
# A gradient off reference()'s at a few elements only (at most KINK_FRACTION of them, or KINK_MIN:
# one kink moves a whole row's gradient where the row is coupled, sparsemax's support)
# may sit at kinks: inputs where the function has no derivative, or where two conventions for its
# slope meet (leaky ReLU at an input of exactly 0, which CUDA's randn yields; a sparsemax entry
# exactly at its threshold, common with float16 inputs). The case passes, saying how many elements
# (`kinks`), where the float64 backward agrees with reference() at points KINK_STEP (relative to
# max(1, max|x|)) away on either side along a random direction: off the kink, and near it. The
# step is a float16 ulp: float16 inputs tie (sparsemax's support ends at duplicates of its lattice)
# where float32 sums round differently from float64's, and a float32-sized step (1e-6) left the
# points beside such a tie within that rounding (sparsemax float16 at 8192 x 1024 failed with
# kink_rel_err 0.22; at 1e-3, 2e-8).
KINK_FRACTION, KINK_MIN, KINK_STEP = 1e-3, 64, 1e-3


def tf32(x):
    """x with its float32 mantissa cut to TF32's 10 bits, as tl.dot treats float32 operands at its
    default precision: the tensor cores ignore the low 13 bits (rounding toward zero; measured on an
    H100, bench/results/2026-11-22-h100-issue3-session5.md). The gradient passes straight through:
    reference gradients are those of the smooth function at the rounded operands."""
    bits = x.detach().float().contiguous().view(torch.int32)
    rounded = (bits & ~0x1FFF).view(torch.float32).to(x.dtype)
    return x + (rounded - x).detach()


# Matrix products of reference() and the positions of the operands TF32 rounds (not a bias).
_PRODUCTS = {torch.matmul: (0, 1), torch.Tensor.matmul: (0, 1), torch.Tensor.__matmul__: (0, 1),
             torch.Tensor.__rmatmul__: (0, 1), torch.mm: (0, 1), torch.Tensor.mm: (0, 1),
             torch.bmm: (0, 1), torch.Tensor.bmm: (0, 1), torch.nn.functional.linear: (0, 1),
             torch.addmm: (1, 2), torch.Tensor.addmm: (1, 2), torch.baddbmm: (1, 2),
             torch.Tensor.baddbmm: (1, 2)}


class Tf32Products(torch.overrides.TorchFunctionMode):
    """Within it, matrix products round their operands to TF32 first; the products and sums stay in
    the operands' dtype. The float64 reference then multiplies what TF32 kernels multiply, and only
    accumulation order and float32 sums separate the two: a pre-activation near a kink (relu) gets
    the same sign in both, where a float64 product of unrounded operands would flip some."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        at = _PRODUCTS.get(func, ())
        args = tuple(tf32(a) if i in at and torch.is_tensor(a) and a.is_floating_point() else a
                     for i, a in enumerate(args))
        return func(*args, **(kwargs or {}))


def verify(module, stub, generated, dims_list, dtypes, seed, grad_inputs, device, progress,
           tolerances=None, use_reference=True):
    """use_reference: compare with reference() where the file has one; without it (the CPU tier's
    whole-stub check), finite differences of the stub in any case."""
    rtol = {**RTOL, **(tolerances or {})}
    cases = list(itertools.product(dims_list, dtypes))
    entries = []
    # Tuning (module_runtime.py's _Tuner) picks num_warps and num_stages, which change no more than
    # the order of a reduction's float additions, and would compile and time every kernel once per
    # case: off here unless the environment asks for it (TAD_AUTOTUNE=1 verifies the tuned options).
    tuning = getattr(generated, "_AUTOTUNE", None)
    if tuning is not None and "TAD_AUTOTUNE" not in os.environ:
        tuning[0] = "off"
    for k, (dims, dtype) in enumerate(cases):
        progress(f"verify {k + 1}/{len(cases)}: {dims} {dtype}", k / len(cases))
        # Kernels multiplying float32 tiles at TF32 precision (10-bit mantissa) round like float16.
        precision = "float16" if dtype == "float32" and getattr(generated, "TF32", False) else dtype
        entries.append(verify_case(module, stub, generated, dims, dtype, seed, grad_inputs, device,
                                   rtol.get(precision, RTOL["float32"]), use_reference))
        release_memory(device)
    return {"results": entries}


def verify_case(module, stub, generated, dims, dtype, seed, grad_inputs, device, rtol, use_reference=True):
    entry = {"dims": dims, "dtype": dtype, "rtol": rtol, "message": None, "outputs": [],
             "grads": []}
    start = time.perf_counter()
    try:
        entry.update(_check(module, stub, generated, dims, dtype, seed, grad_inputs, device, rtol,
                            use_reference))
        ok = all(o["ok"] for o in entry["outputs"]) and all(g["ok"] for g in entry["grads"])
        untracked = [o for o in entry["outputs"] if o.get("untracked_max_rel_err", 0) > rtol]
        if untracked:
            entry["message"] = "; ".join(
                f"output {o['index']} of the generated forward without grad (the stub as written, its "
                f"kernels without residual stores) is off by {o['untracked_max_rel_err']:.3g} (relative)"
                for o in untracked)
        if entry["dot_product"].get("ok") is False:
            ok, entry["message"] = False, dotcheck.failure_message(entry["dot_product"])
        entry["status"] = "pass" if ok else "fail"
        lost = [g for g in entry["grads"] if g.get("unrepresentable")]
        if ok and lost:
            entry["status"] = "skipped"
            entry["message"] = "; ".join(
                f"{dtype} cannot hold the gradient of '{g['name']}': the float64 gradient rounded to "
                f"{dtype} is off by {g['rounding_rel_err']:.3g} (relative), beyond the tolerance "
                f"{rtol:.3g}; other dtypes check it" for g in lost)
    except Exception as e:
        entry["status"] = failed_case(entry, e, dims)
    entry["seconds"] = time.perf_counter() - start
    return entry


def failed_case(entry, exc, dims):
    """Records exc in entry; the status: skipped for an optional entry out of memory, else error."""
    entry["error"] = error_of(exc)
    entry["message"] = f"{entry['error']['kind']}: {entry['error']['message']}"
    log_error(entry["error"], f"verify {dims} {entry['dtype']}")
    optional = dims.get("required", True) is False
    return "skipped" if optional and entry["error"]["kind"] == "oom" else "error"


def release_memory(device):
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()


def errors(got, ref):
    """(max_abs_err, max_rel_err); equal elements, equal infinities included, differ by 0."""
    if got.shape != ref.shape:
        raise TadError("exception", f"shape {list(got.shape)} where the reference has "
                                    f"{list(ref.shape)}")
    got, ref = got.detach().double(), ref.detach().double()
    diff = torch.where(got == ref, torch.zeros_like(got), (got - ref).abs())
    max_abs = diff.max().item() if diff.numel() else 0.0
    scale = ref.abs().max().item() if ref.numel() else 0.0
    return max_abs, max_abs / max(scale, TINY)


def tensor_outputs(result):
    """(index, tensor) for each tensor the stub returned."""
    values = result if isinstance(result, (tuple, list)) else (result,)
    return [(i, v) for i, v in enumerate(values) if torch.is_tensor(v)]


def seeded_randn(like, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(like.shape, generator=gen, dtype=torch.float64).to(like.device)


def grad_leaves(bound, names, convert=lambda t: t):
    """Replaces each gradient input of `bound` by a fresh leaf requiring grad; returns the leaves."""
    leaves = []
    for name in names:
        value = bound.arguments.get(name)
        if not (torch.is_tensor(value) and value.is_floating_point()):
            raise TadError("bad_request", f"gradient input '{name}' is not a floating-point tensor "
                                          "argument of the stub")
        leaf = convert(value.detach()).clone().requires_grad_()
        bound.arguments[name] = leaf
        leaves.append(leaf)
    return leaves


def pull_back(outputs, leaves, cotangents):
    """Gradients of sum(cotangent * output) w.r.t. leaves (zeros where one does not depend)."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    grads = torch.autograd.grad([o for o, _ in pairs], leaves, [c for _, c in pairs],
                                allow_unused=True) if pairs else [None] * len(leaves)
    return [torch.zeros_like(x) if g is None else g for g, x in zip(grads, leaves)]


def _check(module, stub, generated, dims, dtype, seed, grad_inputs, device, rtol, use_reference):
    torch.manual_seed(seed)
    args, kwargs = userfile.make_args(module, {**dims, "dtype": dtype, "device": device})
    plain = userfile.bind(stub, args, kwargs)
    bound = userfile.bind(stub, args, kwargs)
    # An optional grad input the case passes as None (a bias=None) has no gradient to check.
    grad_inputs = [n for n in grad_inputs if bound.arguments.get(n) is not None]
    leaves = grad_leaves(bound, grad_inputs)
    dirty = getattr(generated, "DIRTY", ())
    call = userfile.fresh(bound, dirty)
    out_gen = tensor_outputs(generated.forward(*call.args, **call.kwargs))
    with torch.no_grad(), user_code(f"stub '{stub.__name__}'"):
        call = userfile.fresh(plain, dirty)
        out_stub = dict(tensor_outputs(stub(*call.args, **call.kwargs)))
    # A call autograd does not record takes the module's other path (the stub as written, kernels
    # without the residuals' stores): its outputs are checked too.
    with torch.no_grad():
        call = userfile.fresh(plain, dirty)
        out_untracked = dict(tensor_outputs(generated.forward(*call.args, **call.kwargs)))
    outputs = []
    for i, o in out_gen:
        if i not in out_stub:
            raise TadError("exception", f"the generated forward returned a tensor at position {i} "
                                        "where the stub did not")
        if i not in out_untracked:
            raise TadError("exception", f"the generated forward returned a tensor at position {i} "
                                        "with grad and none without")
        max_abs, max_rel = errors(o, out_stub[i])
        _, untracked_rel = errors(out_untracked[i], out_stub[i])
        outputs.append({"index": i, "shape": list(o.shape), "dtype": dtype_name(o.dtype),
                        "max_abs_err": max_abs, "max_rel_err": max_rel, "untracked_max_rel_err": untracked_rel,
                        "ok": max_rel <= rtol and untracked_rel <= rtol})
    diff = [(i, o) for i, o in out_gen if o.requires_grad]
    # Rounded to the output's dtype first, so that every run pulls back the same cotangent.
    cot64 = [seeded_randn(o, seed + 1 + i).to(o.dtype).double() for i, o in diff]
    grads = pull_back([o for _, o in diff], leaves, [c.to(o.dtype) for c, (_, o) in zip(cot64, diff)])

    eager = [None] * len(grad_inputs)
    if use_reference and callable(getattr(module, "reference", None)):
        tf32_ = dtype == "float32" and getattr(generated, "TF32", False)
        ref_grads = _reference(module, stub, plain, grad_inputs, diff, cot64, out_stub, outputs, rtol,
                               tf32_)
        fd = None
        if dtype != "float64":
            eager = _eager_errors(module, stub, plain, grad_inputs, diff, cot64, ref_grads, tf32_)
    else:
        ref_grads, fd, precision = _finite_differences(module, stub, generated, dims, plain,
                                                       grad_inputs, diff, cot64, seed, device,
                                                       dirty)
        fd_rtol = FD[precision][1]
    report, bounds = [], []
    for k, (name, g) in enumerate(zip(grad_inputs, grads)):
        entry = {"name": name, "shape": list(g.shape), "dtype": dtype_name(g.dtype)}
        if fd is not None and dtype == "float64":
            max_abs, max_rel = fd[k]
            entry.update(max_abs_err=max_abs, max_rel_err=max_rel, ok=max_rel <= fd_rtol)
            if math.isnan(max_rel):
                entry["message"] = NOT_FINITE
        else:
            max_abs, max_rel = errors(g, ref_grads[k])
            bound = rtol
            if eager[k] is not None:
                entry["eager_rel_err"] = eager[k]
                bound = max(rtol, min(EAGER_FACTOR * eager[k], EAGER_CAP * rtol))
            entry.update(max_abs_err=max_abs, max_rel_err=max_rel, ok=max_rel <= bound)
            bounds.append(bound)
            floor = 0.0
            if not entry["ok"] and fd is None:  # only a failing gradient pays for the rounding
                floor = errors(ref_grads[k].to(g.dtype), ref_grads[k])[1]
            if floor > bound:
                # Even the exact gradient rounded to the test dtype is this far off (a mean over
                # 16M elements underflows float16): the dtype cannot tell a right gradient from a
                # wrong one, and the case says so instead of failing or passing.
                entry.update(rounding_rel_err=floor, ok=True, unrepresentable=True)
            if fd is not None:
                entry.update(fd_abs_err=fd[k][0], fd_rel_err=fd[k][1],
                             ok=entry["ok"] and fd[k][1] <= fd_rtol)
                if math.isnan(fd[k][1]):
                    entry["message"] = NOT_FINITE
        report.append(entry)
    if fd is None:
        _excuse_kinks(module, stub, generated, dims, plain, grad_inputs, diff, cot64, seed,
                      device, dirty, tf32_, report, bounds, grads, ref_grads)
    # The second, reference-free check: forward mode against the backward (tad_dotcheck).
    dot = dotcheck.check(generated, plain, grad_inputs, seed, dtype)
    if fd is None:
        return {"reference": "reference()", "outputs": outputs, "grads": report,
                "dot_product": dot}
    return {"reference": "finite differences", "fd_precision": precision, "fd_rtol": fd_rtol,
            "outputs": outputs, "grads": report, "dot_product": dot}


def _reference(module, stub, plain, grad_inputs, diff, cot64, out_stub, outputs, rtol, tf32_):
    """Gradients of reference() in float64; also checks the stub's outputs against its outputs.

    reference() takes the stub's arguments; floating-point tensors become float64 copies. tf32_:
    the kernels multiply float32 tiles at TF32 precision, and reference()'s matrix products round
    their operands the same way (Tf32Products).
    """
    ref = userfile.bind(stub, plain.args, plain.kwargs)
    for name, value in ref.arguments.items():
        if torch.is_tensor(value) and value.is_floating_point():
            ref.arguments[name] = value.detach().double()
    leaves = grad_leaves(ref, grad_inputs)
    with Tf32Products() if tf32_ else contextlib.nullcontext(), user_code("reference()"):
        ref_out = dict(tensor_outputs(module.reference(*ref.args, **ref.kwargs)))
    for o in outputs:
        r = ref_out.get(o["index"])
        if r is None:
            raise TadError("exception", f"reference() returned no tensor at position {o['index']}")
        o["ref_max_abs_err"], o["ref_max_rel_err"] = errors(out_stub[o["index"]], r)
        o["ok"] = o["ok"] and o["ref_max_rel_err"] <= rtol
    return pull_back([ref_out[i] for i, _ in diff], leaves, cot64)


def _eager_errors(module, stub, plain, grad_inputs, diff, cot64, ref_grads, tf32):
    """Per gradient input, the max_rel_err of reference()'s own gradients in the test dtype against
    its float64 ones (None where reference() fails in that dtype, as some CPU ops do in float16).
    tf32: the generated kernels multiply float32 at TF32 precision, and so does PyTorch here."""
    ref = userfile.bind(stub, plain.args, plain.kwargs)
    leaves = grad_leaves(ref, grad_inputs)
    matmul = getattr(torch.backends.cuda, "matmul", None)
    saved = matmul.allow_tf32 if matmul is not None else None
    try:
        if matmul is not None:
            matmul.allow_tf32 = tf32
        out = dict(tensor_outputs(module.reference(*ref.args, **ref.kwargs)))
        grads = pull_back([out[i] for i, _ in diff], leaves,
                          [c.to(out[i].dtype) for c, (i, _) in zip(cot64, diff)])
    except Exception:
        return [None] * len(grad_inputs)
    finally:
        if matmul is not None:
            matmul.allow_tf32 = saved
    return [errors(g, r)[1] for g, r in zip(grads, ref_grads)]


def _float64_point(module, stub, dims, plain, seed, device):
    """The stub's arguments for dtype float64 (make_args') at the test run's point: its
    floating-point tensors in float64."""
    torch.manual_seed(seed)
    args, kwargs = userfile.make_args(module, {**dims, "dtype": "float64", "device": device})
    base = userfile.bind(stub, args, kwargs)
    for name, value in base.arguments.items():
        test = plain.arguments.get(name)
        if (torch.is_tensor(value) and value.is_floating_point() and torch.is_tensor(test)
                and test.shape == value.shape):
            base.arguments[name] = test.detach().to(value.dtype)
    return base


def _excuse_kinks(module, stub, generated, dims, plain, grad_inputs, diff, cot64, seed, device,
                  dirty, tf32_, report, bounds, grads, ref_grads):
    """Marks the failing gradients whose failure is kinks' (KINK_FRACTION) as passing: `kinks`, the
    elements off, and `kink_rel_err`, the float64 backward's worst error against reference() at
    the two points beside the test point. A failing gradient not excused says how many elements
    were off (`off_elements`) and, where the points beside were tried, `kink_rel_err`."""
    suspects = {}
    for k, entry in enumerate(report):
        if entry["ok"] or entry.get("message"):
            continue
        g, r = grads[k].detach().double(), ref_grads[k].detach().double()
        off = (g != r) & ((g - r).abs() > bounds[k] * r.abs().max().item())
        entry["off_elements"] = count = int(off.sum().item())
        if g[off].isfinite().all() and count <= max(KINK_MIN, KINK_FRACTION * g.numel()):
            suspects[k] = count
    if not suspects:
        return
    try:
        base = _float64_point(module, stub, dims, plain, seed, device)
        points = [base.arguments[name].detach() for name in grad_inputs]
        steps = [KINK_STEP * magnitude(x) * _direction(x, seed + 2000 + k)
                 for k, x in enumerate(points)]
        worst = dict.fromkeys(suspects, 0.0)
        for sign in (1.0, -1.0):
            shift = {n: x + sign * s for n, x, s in zip(grad_inputs, points, steps)}
            gen = _grads64(generated.forward, stub, base, shift, grad_inputs, diff, cot64, dirty)
            with Tf32Products() if tf32_ else contextlib.nullcontext():
                ref = _grads64(module.reference, stub, base, shift, grad_inputs, diff, cot64, dirty)
            for k in suspects:
                worst[k] = max(worst[k], errors(gen[k], ref[k])[1])
    except Exception:  # the float64 runs fail: nothing is excused
        return
    for k, count in suspects.items():
        report[k]["kink_rel_err"] = worst[k]
        if worst[k] <= bounds[k]:
            del report[k]["off_elements"]
            report[k].update(ok=True, kinks=count)


def _direction(like, seed):
    """A seeded random direction, scaled to max|v| = 1."""
    v = seeded_randn(like, seed).to(like.dtype)
    return v / max(v.abs().max().item() if v.numel() else 0.0, TINY)


def _grads64(fn, stub, base, shift, grad_inputs, diff, cot64, dirty):
    """The float64 gradients of fn (the generated forward or reference()) at the stub's arguments
    `base` with some replaced (`shift`), pulled back from the cotangents cot64."""
    b = userfile.bind(stub, base.args, base.kwargs)
    b.arguments.update(shift)
    leaves = grad_leaves(b, grad_inputs)
    call = userfile.fresh(b, dirty)
    out = dict(tensor_outputs(fn(*call.args, **call.kwargs)))
    return pull_back([out[i] for i, _ in diff], leaves, cot64)


def _finite_differences(module, stub, generated, dims, plain, grad_inputs, diff, cot64, seed,
                        device, dirty):
    """The generated backward in float64; its directional errors against central differences of
    the stub, [(max_abs_err, max_rel_err)] per gradient input; the stub's effective precision."""
    try:
        base = _float64_point(module, stub, dims, plain, seed, device)
    except Exception as e:
        raise TadError("exception", "without reference() gradients are checked by finite "
                                    "differences in float64, and for dtype float64 "
                                    f"{described(e)}") from e
    bound = userfile.bind(stub, base.args, base.kwargs)
    leaves = grad_leaves(bound, grad_inputs)
    try:
        call = userfile.fresh(bound, dirty)
        out = dict(tensor_outputs(generated.forward(*call.args, **call.kwargs)))
        g64 = pull_back([out[i] for i, _ in diff], leaves, cot64)
    except Exception as e:
        raise TadError("exception", "the generated backward failed in float64, which finite "
                                    "differences need (a reference() in the file avoids them): "
                                    f"{described(e)}") from e

    def run(replaced):
        """The stub's differentiable outputs with some arguments replaced."""
        b = userfile.bind(stub, base.args, base.kwargs)
        b.arguments.update(replaced)
        b = userfile.fresh(b, dirty)
        try:
            with torch.no_grad():
                out = dict(tensor_outputs(stub(*b.args, **b.kwargs)))
        except Exception as e:
            raise TadError("exception", "the stub failed in float64, which finite differences "
                                        "need (a reference() in the file avoids them): "
                                        f"{described(e)}") from e
        return [out[i] for i, _ in diff]

    def loss(name, x):
        return sum((c * o.double()).sum().item() for c, o in zip(cot64, run({name: x})))

    points = [base.arguments[name].detach() for name in grad_inputs]

    def direction(k, d):  # made on demand, as each is as large as its input
        return _direction(points[k], seed + 1000 + FD_DIRECTIONS * k + d)

    # Probed a float64 step away from the test point, whose values may all be float32 ones.
    precision = effective_precision(run({name: x + FD["float64"][0] * magnitude(x) * direction(k, 0)
                                         for k, (name, x) in enumerate(zip(grad_inputs, points))}))

    fd = []
    for k, (name, x) in enumerate(zip(grad_inputs, points)):
        h = FD[precision][0] * magnitude(x)
        worst, scale = 0.0, 0.0
        for d in range(FD_DIRECTIONS):
            v = direction(k, d)
            analytic = (g64[k].double() * v.double()).sum().item()
            err, numeric = math.inf, 0.0
            # A step that crosses a kink (relu's 0 at some element of a large input) measures the
            # kink, not the derivative; smaller steps stop crossing it, where a wrong gradient
            # stays wrong at every step. The direction's best agreement counts.
            for step in FD_STEPS[precision]:
                f = (loss(name, x + h * step * v) - loss(name, x - h * step * v)) / (2 * h * step)
                if not math.isfinite(f - analytic):
                    err = math.nan
                    break
                if abs(f - analytic) < err:
                    err, numeric = abs(f - analytic), f
                if err <= FD[precision][1] * max(abs(numeric), abs(analytic), TINY):
                    break
            if math.isnan(err):  # max() would drop a NaN: it must fail
                worst = scale = math.nan
                break
            worst = max(worst, err)
            scale = max(scale, abs(numeric), abs(analytic))
        fd.append((worst, math.nan if math.isnan(worst) else worst / max(scale, TINY)))
    return g64, fd, precision


def described(exc):
    """A TadError's message (it names what failed), else "<Type>: <message>"."""
    return exc.message if isinstance(exc, TadError) else f"{type(exc).__name__}: {exc}"


def magnitude(x):
    """What finite-difference steps are relative to: max(1, max|x|)."""
    return max(1.0, x.abs().max().item() if x.numel() else 0.0)


def effective_precision(outputs):
    """The precision a stub fed float64 computes in: "float32" when every output holds float32
    values only (a kernel that converts its loads to float32 stores float32 results whatever the
    input dtype), else "float64"."""
    rounded = all(torch.equal(o.double(), o.float().double()) for o in outputs)
    return "float32" if rounded else "float64"

"""The bench suite: per case, times side by side in one process the generated module's backward,
the hand-written reference's (bench/refs), PyTorch eager's and torch.compile's backward of the
file's reference(), and a device copy of as many bytes as the backward must read and write.

    python3 bench/suite.py --case FILE STUB DIMS_JSON DTYPE [MODULE] [--case ...] [--out DIR]
    python3 bench/suite.py --report-only [--out DIR]

MODULE is what `tad generate FILE -o MODULE` wrote ("-" or absent: no generated column). Timing as
bench/graph_bench.py: CUDA-graph replay, L2 flushed before each replay, median. An autograd variant
(generated, eager, compile) is captured as forward + backward and as forward alone (grad enabled),
and its backward is the difference; the hand-written backward and the copy are captured alone. The
upstream gradient is one fixed random tensor for all. Before timing, every variant's gradients are
checked against eager autograd of reference() in float32; a hand-written reference that fails is
reported, not timed (the others are timed, their failed checks noted). Appends one JSON record per case to DIR/results.jsonl (bench/suite_table.py
says what it holds), then writes DIR/table.md (also printed) and DIR/ratio.png from every record
there. DIR defaults to $OUT, else bench/out/suite.
"""
import argparse
import gc
import inspect
import json
import os
import sys
import traceback
import types

import torch

import graph_bench
import refs
import suite_table

# Largest gradient error allowed, relative to the largest expected gradient (float32: tl.dot
# rounds float32 operands to TF32); as in tad's GPU verification, a variant may also err up to
# EAGER_FACTOR times as much as eager PyTorch in the test dtype does, never beyond EAGER_CAP x.
TOLERANCE = {"float16": 2e-2, "bfloat16": 5e-2, "float32": 1e-2}
EAGER_FACTOR, EAGER_CAP = 2.0, 10.0


def install_tad_shim():
    """Lets the forward files' `import tad` / `@tad.autodiff(...)` load where the binding is
    not installed: the suite only needs the stub, the generated module stands alone."""
    try:
        import tad  # noqa: F401
    except ImportError:
        shim = types.ModuleType("tad")
        shim.autodiff = lambda fn=None, **_: (lambda f: f) if fn is None else fn
        sys.modules["tad"] = shim


def as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def short(exc):
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return text[0][:160] if text else type(exc).__name__


class Case:
    """One (forward file, stub, dims, dtype): its arguments, upstream gradient and float32 truth."""

    def __init__(self, path, stub_name, dims, dtype, module_path):
        self.path, self.dims, self.dtype = path, dims, dtype
        self.stem = os.path.splitext(os.path.basename(path))[0]
        self.file = graph_bench.load(path, "forward_" + self.stem)
        stub = getattr(self.file, stub_name)
        stub = getattr(stub, "__wrapped__", stub)
        self.module = None
        if module_path:
            self.module = graph_bench.load(module_path, "generated_" + self.stem)
        self.ref = refs.for_file(self.stem)
        torch.manual_seed(0)
        args, kwargs = self.file.make_args({**dims, "device": "cuda", "dtype": dtype})
        bound = inspect.signature(stub).bind(*args, **kwargs)
        bound.apply_defaults()
        self.args = dict(bound.arguments)
        source = self.module or self.ref
        if source is None:
            raise ValueError(f"{self.stem}: no generated module and no reference in bench/refs")
        self.grad_names = list(source.GRAD_INPUTS)
        with torch.no_grad():
            outs = as_list(self.file.reference(**self.args))
        self.dys = [torch.randn_like(o) for o in outs if o.is_floating_point()]
        self.expected = self._expected()
        self._tolerance = None

    def _expected(self):
        # Copies, also of float32 tensors: the case's own arguments must not become leaves.
        args = {k: (v.detach().to(torch.float32, copy=True)
                    if torch.is_tensor(v) and v.is_floating_point() else v)
                for k, v in self.args.items()}
        leaves = [args[n].requires_grad_(True) for n in self.grad_names]
        outs = [o for o in as_list(self.file.reference(**args))
                if torch.is_tensor(o) and o.requires_grad]
        grads = torch.autograd.grad(outs, leaves, [dy.float() for dy in self.dys[:len(outs)]])
        return [g.detach() for g in grads]

    def errors(self, grads):
        """{name: largest error relative to the largest expected gradient}, or a str saying
        which gradient is missing or misshapen."""
        errors = {}
        for name, got, want in zip(self.grad_names, grads, self.expected):
            if got is None or got.shape != want.shape:
                return f"{name}: shape {None if got is None else tuple(got.shape)}"
            scale = want.abs().max().item() or 1.0
            errors[name] = (got.float() - want).abs().max().item() / scale
        return errors

    def tolerance(self):
        """The dtype's tolerance, or up to EAGER_FACTOR times eager PyTorch's own error in the test
        dtype (never beyond EAGER_CAP times the tolerance): what tad's GPU verification allows."""
        if self._tolerance is None:
            rtol = TOLERANCE.get(self.dtype, 2e-2)
            args, leaves = self.leaves()
            outs = [o for o in as_list(self.file.reference(**args))
                    if torch.is_tensor(o) and o.requires_grad]
            eager = self.errors(torch.autograd.grad(outs, leaves, self.dys[:len(outs)]))
            worst = max(eager.values()) if isinstance(eager, dict) and eager else 0.0
            self._tolerance = min(max(rtol, EAGER_FACTOR * worst), EAGER_CAP * rtol)
        return self._tolerance

    def check(self, grads):
        """"ok", or why the gradients are wrong."""
        errors = self.errors(grads)
        if isinstance(errors, str):
            return f"FAIL ({errors})"
        tol = self.tolerance()
        for name, err in errors.items():
            if not err <= tol:
                return f"FAIL ({name}: error {err:.3g} > {tol:.3g})"
        return "ok"

    def leaves(self):
        args = dict(self.args)
        for name in self.grad_names:
            args[name] = args[name].detach().clone().requires_grad_(True)
        return args, [args[n] for n in self.grad_names]

    def autograd_variant(self, fn):
        """Checked, then timed as forward + backward minus forward."""
        args, leaves = self.leaves()

        def both():
            outs = [o for o in as_list(fn(**args)) if torch.is_tensor(o) and o.requires_grad]
            return torch.autograd.grad(outs, leaves, self.dys[:len(outs)])

        result = {"check": self.check(both())}
        # The forward alone runs with grad enabled: the same kernels (and, for torch.compile, the
        # same compiled graph) as the forward inside forward + backward.
        fwd = graph_bench.replay_ms(lambda: fn(**args))
        result["ms"] = graph_bench.replay_ms(both) - fwd
        return result

    def hand_written(self):
        saved = self.ref.save(**self.args)

        def backward():
            return self.ref.backward(**self.args, grad_out=self.dys[0], saved=saved)

        by_name = dict(zip(self.ref.GRAD_INPUTS, as_list(backward())))
        check = self.check([by_name.get(n) for n in self.grad_names])
        if check != "ok":
            return {"check": check, "ms": None}
        return {"check": check, "ms": graph_bench.replay_ms(backward)}

    def copy_bytes(self):
        if self.ref is not None:
            return self.ref.min_bytes(**self.args)
        if hasattr(self.file, "bytes"):
            return self.file.bytes({**self.dims, "dtype": self.dtype}, "bwd")
        return None

    def copy(self, total):
        src = torch.empty(total // 2, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        return {"ms": graph_bench.replay_ms(lambda: dst.copy_(src))}

    def flops(self):
        if hasattr(self.file, "flops"):
            return self.file.flops({**self.dims, "dtype": self.dtype}, "bwd")
        return None


def guarded(fn):
    """fn's result, or its error as a record: one variant's failure does not end the case."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 -- reported in the table, not fatal
        traceback.print_exc(file=sys.stderr)
        return {"ms": None, "error": short(exc)}


def run_case(path, stub, dims, dtype, module_path):
    missing = module_path is not None and not os.path.exists(module_path)
    case = Case(path, stub, dims, dtype, None if missing else module_path)
    total = case.copy_bytes()
    variants = {}
    if missing:
        variants["generated"] = {"ms": None, "error": f"no module at {module_path}"}
    if case.module is not None:
        variants["generated"] = guarded(lambda: case.autograd_variant(case.module.forward))
    if case.ref is not None:
        variants["hand-written"] = guarded(case.hand_written)
    variants["eager"] = guarded(lambda: case.autograd_variant(case.file.reference))
    if total:
        variants["copy"] = guarded(lambda: case.copy(total))

    # Last: a capture that torch.compile's code breaks could leave the device unusable.
    def compiled():
        torch._dynamo.reset()
        return case.autograd_variant(torch.compile(case.file.reference))

    variants["compile"] = guarded(compiled)
    return {"kernel": case.stem, "file": path, "dims": dims, "dtype": dtype, "flops": case.flops(),
            "bytes": total, "variants": variants}


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", nargs="+", action="append", default=[],
                        metavar="FILE STUB DIMS_JSON DTYPE [MODULE]")
    parser.add_argument("--out", default=os.environ.get("OUT") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "out", "suite"))
    parser.add_argument("--report-only", action="store_true",
                        help="rebuild table.md and ratio.png from OUT/results.jsonl")
    parser.add_argument("--no-report", action="store_true", help="only append the records")
    args = parser.parse_args(argv)
    for spec in args.case:
        if len(spec) not in (4, 5):
            parser.error(f"--case takes FILE STUB DIMS_JSON DTYPE [MODULE], got {spec}")
    return args


def main(argv):
    args = parse(argv)
    install_tad_shim()
    os.makedirs(args.out, exist_ok=True)
    results = os.path.join(args.out, "results.jsonl")
    status = 0
    for spec in [] if args.report_only else args.case:
        path, stub, dims, dtype = spec[:4]
        module = spec[4] if len(spec) == 5 and spec[4] != "-" else None
        try:
            record = run_case(path, stub, json.loads(dims), dtype, module)
        except Exception as exc:  # noqa: BLE001 -- the case is reported as failed
            traceback.print_exc(file=sys.stderr)
            record = {"kernel": os.path.splitext(os.path.basename(path))[0], "file": path,
                      "dims": json.loads(dims), "dtype": dtype, "flops": None, "bytes": None,
                      "variants": {}, "error": short(exc)}
            status = 1
        print(json.dumps(record), file=sys.stderr, flush=True)
        with open(results, "a") as f:
            f.write(json.dumps(record) + "\n")
        gc.collect()
        torch.cuda.empty_cache()
    if not args.no_report and os.path.exists(results):
        print(suite_table.write_report(suite_table.read_records(results), args.out), end="")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

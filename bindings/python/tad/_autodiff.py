"""@tad.autodiff: makes a Triton stub differentiable with a backward tad generates on first use.

The first differentiable call for a specialization key traces the stub in this process (the kernels
run once, their launches are recorded), hands the trace record to the library, which generates a
standalone module, and caches that module on disk. Before the module's gradients are used, its
backward is checked against its forward mode on that call's arguments (`_check`, the dot-product
test), once per key and process, or not at all where a passing check of the same module file in the
same environment is recorded beside it. Later calls go straight to the module's `forward`, an
autograd.Function.
"""

import functools
import hashlib
import importlib.util
import inspect
import json
import os
import sys
import tempfile
import threading
import warnings

from . import _check, _tad


def autodiff(*, grad_inputs, check=True):
    """Decorates a stub that launches @triton.jit kernels; `grad_inputs` names the parameters
    (tensors) the backward produces gradients for. tad's compiler reads the same decorator from the
    forward file's source. `check`: test each specialization's generated backward against its
    forward mode on its first differentiable call (tad.GradientCheckError when they disagree); the
    environment's TAD_CHECK=0 or 1 overrides it for the whole process."""
    names = (grad_inputs,) if isinstance(grad_inputs, str) else tuple(grad_inputs)
    if not isinstance(check, bool):
        raise TypeError(f"@tad.autodiff: check must be True or False, not {check!r}")

    def decorate(stub):
        params = inspect.signature(stub).parameters
        unknown = [n for n in names if n not in params]
        if unknown or not names or len(set(names)) != len(names):
            raise ValueError(f"@tad.autodiff on {stub.__qualname__}: grad_inputs {names!r} must be "
                             f"distinct parameter names of {stub.__qualname__}{inspect.signature(stub)}")
        return _Differentiable(stub, names, check).wrapper()

    return decorate


def specialization_key(signature, args, kwargs):
    """What a generated backward is specialized on: per parameter, (dtype, ndim, device type) of a
    tensor, or the type of any other value. Values themselves (sizes, eps, ...) are not in the key:
    the generated module reads them at run time, as the stub does. The same call written with
    positional or keyword arguments, or relying on a default, gives the same key."""
    torch = sys.modules.get("torch")
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    key = []
    for name, value in bound.arguments.items():
        if torch is not None and torch.is_tensor(value):
            key.append((name, "tensor", str(value.dtype).replace("torch.", ""), value.dim(),
                        value.device.type))
        else:
            key.append((name, f"{type(value).__module__}.{type(value).__qualname__}"))
    return tuple(key)


def cache_dir():
    """$TAD_CACHE_DIR, else ~/.cache/tad."""
    return os.environ.get("TAD_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tad")


def cache_file(stub, key):
    """The generated module's path: a digest of everything the generated source depends on."""
    with open(forward_file(stub), "rb") as f:
        forward = f.read()
    digest = hashlib.sha256()
    digest.update(json.dumps([_tad.version(), stub.__qualname__, key]).encode())
    digest.update(b"\0")
    digest.update(forward)
    return os.path.join(cache_dir(), f"{digest.hexdigest()}.py")


def forward_file(stub):
    """The file defining the stub: tad parses it and generates from its source."""
    path = inspect.getsourcefile(stub)
    if path is None or not os.path.isfile(path):
        raise _tad.FileError(f"@tad.autodiff: {stub.__qualname__} is not defined in a file tad can "
                             f"read ({path}); define it in a .py file")
    return os.path.abspath(path)


def generate_source(stub, args, kwargs, work_dir, grad_inputs):
    """Traces stub(*args, **kwargs) here and returns the source of the generated module.

    The trace runs on copies of the arguments with autograd on, so that torch code in the stub
    that computes an output or a kernel argument from the grad inputs is seen (and refused by the
    library, naming its op) instead of getting no gradient."""
    from . import _trace

    module = sys.modules[stub.__module__]
    try:
        _, record = _trace.trace_call(module, stub, args, kwargs, grad_inputs=grad_inputs)
    except _trace.TadError as e:
        error = _tad.NoKernelError if e.kind in ("no_stub", "no_launch") else _tad.WorkerError
        raise error(e.message) from e
    record["dims"] = {}  # part of the trace record format; a call has arguments, not SWEEP dims
    with _tad.Session(work_dir=work_dir) as session:
        session.load_forward(forward_file(stub))
        return session.candidate_source(session.generate(launch=record))


def import_generated(path):
    """Imports a generated module by path under a name derived from its (content-hash) file name."""
    name = "tad_generated_" + os.path.splitext(os.path.basename(path))[0][:16]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    if not callable(getattr(module, "forward", None)) or not hasattr(module, "GRAD_INPUTS"):
        del sys.modules[name]
        raise _tad.InternalError(f"{path} is not a tad-generated module: it lacks forward() or "
                                 "GRAD_INPUTS")
    return module


def write_atomically(path, text, suffix=".py"):
    """Readers (other processes) see the whole file or none: temp file, fsync, rename."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


class _Differentiable:
    def __init__(self, stub, grad_inputs, check):
        self.stub = stub
        self.grad_inputs = grad_inputs
        self.check = check
        self.signature = inspect.signature(stub)
        self.modules = {}  # specialization key -> generated module, checked (or check off)
        self.failures = {}  # specialization key -> the report of its failed check
        self.unchecked = {}  # specialization key -> module imported, its check inconclusive so far
        self.lock = threading.Lock()  # one generation and one check per key, even with several threads

    def wrapper(self):
        stub = self.stub

        @functools.wraps(stub)
        def wrapper(*args, **kwargs):
            # Without torch imported there can be no tensor argument; otherwise the cheap scan
            # below keeps inference calls as fast as calling the stub.
            torch = sys.modules.get("torch")
            if (torch is None or not torch.is_grad_enabled()
                    or not any(torch.is_tensor(v) and v.requires_grad
                               for v in (*args, *kwargs.values()))):
                return stub(*args, **kwargs)
            return self.differentiable_call(args, kwargs)

        wrapper.__tad_stub__ = stub
        wrapper.grad_inputs = self.grad_inputs
        wrapper.check = self.check
        return wrapper

    def differentiable_call(self, args, kwargs):
        import torch
        bound = self.signature.bind(*args, **kwargs)
        stray = [n for n, v in bound.arguments.items()
                 if torch.is_tensor(v) and v.requires_grad and n not in self.grad_inputs]
        if stray:
            # The backward has no gradient for these: going on would silently cut the graph.
            raise ValueError(f"{self.stub.__qualname__}: {', '.join(stray)} require(s) grad but "
                             f"grad_inputs is {self.grad_inputs!r}")
        key = specialization_key(self.signature, args, kwargs)
        module = self.modules.get(key)
        if module is None:
            with self.lock:
                module = self.modules.get(key) or self.first_use(key, args, kwargs)
        return module.forward(*args, **kwargs)

    def first_use(self, key, args, kwargs):
        """The module for key, generated or loaded, and checked unless the check is off: kept for
        later calls once its check passed (or could not run: no forward mode). A failed check is
        remembered: every later call of the key raises it again without checking again."""
        if key in self.failures:
            report = self.failures[key]
            raise _check.GradientCheckError(_check.failure_message(report), report)
        path = cache_file(self.stub, key)
        module = self.unchecked.pop(key, None) or self.load_or_generate(path, args, kwargs)
        if not _check.enabled(self.check):
            self.modules[key] = module
            return module
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        env = _check.environment(bound)
        marker = _check.marker_file(path, env)
        if os.path.exists(marker):  # a passing check of this very file, here, by an earlier process
            self.modules[key] = module
            return module
        try:
            report = _check.run(module, bound, self.stub.__qualname__, key, path)
        except Exception as e:
            e.add_note(f"(raised by tad's check of the generated backward of {self.stub.__qualname__} "
                       f"on its first use, {path}; @tad.autodiff(..., check=False) or TAD_CHECK=0 turn "
                       "the check off)")
            raise
        # stacklevel: warn -> first_use -> differentiable_call -> wrapper -> the caller
        if report["status"] == "fail":
            self.failures[key] = report
            raise _check.GradientCheckError(_check.failure_message(report), report)
        if report["status"] == "inconclusive":
            warnings.warn(_check.inconclusive_message(report), _check.GradientCheckWarning, stacklevel=4)
            self.unchecked[key] = module  # not trusted: the next call checks again
            return module
        if report["status"] == "unchecked":
            warnings.warn(_check.unchecked_message(report), _check.GradientCheckWarning, stacklevel=4)
        else:
            try:
                text = json.dumps({**report, "environment": env}, indent=1)
                write_atomically(marker, text + "\n", suffix=".json")
            except OSError:
                pass  # a read-only cache: the next process checks again
        self.modules[key] = module
        return module

    def load_or_generate(self, path, args, kwargs):
        if not os.path.exists(path):
            source = generate_source(self.stub, args, kwargs, os.path.join(cache_dir(), "work"),
                                     self.grad_inputs)
            write_atomically(path, source)
        return import_generated(path)

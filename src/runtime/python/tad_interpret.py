"""Kernel launches run on tad's CPU interpreter: the executor of the CPU tier's whole-stub check.

Within `executing(library)`, every launch the stand-in triton gets (the stub's, the generated
module's backward and tangent kernels) runs on libtad's interpreter through its C ABI
(tad_interpret in tad.h), in float64 whatever the tensors' dtypes. Everything else of the stub and
the module (allocations, torch code, autograd) runs as it would on a GPU, on CPU torch.

Each storage a launch gets becomes one interpreter buffer: float64 storages in place, others
through a float64 copy written back afterwards (an int32 index table).

The interpreter computes in float64 whatever the IR's types, and so must the rest of the stub: a
buffer the stub allocates as float32 (`torch.empty_like(x, dtype=torch.float32)`) would round what
the kernel stores, and finite differences of the stub would measure that rounding. So within
`executing`, torch creates and converts floating tensors in float64 instead of a narrower float
dtype given as an argument (`Float64`), as the plan oracle keeps every buffer in float64.
"""

import contextlib
import ctypes
import os

import tad_trace
from tad_trace import TadError


class _Buffer(ctypes.Structure):
    _fields_ = [("data", ctypes.POINTER(ctypes.c_double)), ("size", ctypes.c_longlong)]


class Interpreter:
    """libtad's tad_interpret, called for the stand-in's launches."""

    def __init__(self, library):
        try:
            lib = ctypes.CDLL(library)
        except OSError as e:
            raise TadError("bad_request", f"cannot load libtad from {library}: {e}") from e
        lib.tad_interpret.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.POINTER(_Buffer), ctypes.c_int]
        lib.tad_interpret.restype = ctypes.c_int
        lib.tad_error_last.restype = ctypes.c_char_p
        self.lib = lib
        self.classes = tad_trace.kernel_classes()
        self.sources = {}  # path -> text of a file that defines launched kernels

    def __call__(self, kernel, grid, args, kwargs):
        import json

        import torch

        fn = tad_trace.base_fn(kernel, self.classes)
        name, grid, _, params = tad_trace.describe_launch(kernel, self.classes, fn.__name__, grid,
                                                          args, kwargs)
        path = fn.__code__.co_filename
        with torch.no_grad():
            storages = _Storages()
            launch = {"kernel": name, "grid": grid,
                      "args": [tad_trace.arg_entry(p, v, storages) for p, v in params]}
            buffers = (_Buffer * len(storages.f64))(
                *[_Buffer(ctypes.cast(b.data_ptr(), ctypes.POINTER(ctypes.c_double)), b.numel())
                  for b in storages.f64])
            status = self.lib.tad_interpret(self._source(path).encode(), path.encode(),
                                            json.dumps(launch).encode(), buffers, len(storages.f64))
            if status != 0:
                raise TadError("launch", f"kernel '{name}' on tad's interpreter: "
                                         f"{self.lib.tad_error_last().decode()}")
            storages.write_back()

    def _source(self, path):
        if path not in self.sources:
            with open(path, encoding="utf-8") as f:
                self.sources[path] = f.read()
        return self.sources[path]


class _Storages:
    """The storages of one launch's tensors, each as a flat float64 buffer (resolve() follows
    tad_trace's memory: a tensor is a buffer and the element offset where it starts)."""

    def __init__(self):
        self.flat = []  # each storage as a flat tensor of its tensors' dtype
        self.f64 = []  # the buffer the interpreter gets: `flat` itself when float64, else a copy
        self.index = {}  # storage address -> position

    def resolve(self, t):
        import torch

        storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()  # torch < 2
        key = storage.data_ptr()
        if key not in self.index:
            flat = torch.empty(0, dtype=t.dtype).set_(storage, 0, (storage.nbytes() // t.element_size(),))
            self.index[key] = len(self.flat)
            self.flat.append(flat)
            self.f64.append(flat if flat.dtype == torch.float64 else flat.double())
        i = self.index[key]
        if self.flat[i].dtype != t.dtype:
            raise TadError("launch", f"one storage passed to a kernel as {self.flat[i].dtype} and "
                                     f"{t.dtype}: the interpreter keeps one dtype per buffer")
        return {"buffer": i}, t.storage_offset()

    def write_back(self):
        for flat, f64 in zip(self.flat, self.f64):
            if f64 is not flat:
                flat.copy_(f64)


def _float64_mode():
    import torch

    narrow = {torch.float16, torch.bfloat16, torch.float32}

    def widened(a):
        return torch.float64 if isinstance(a, torch.dtype) and a in narrow else a

    class Float64(torch.overrides.TorchFunctionMode):
        """A `dtype` argument of float16, bfloat16 or float32 is float64, positional (as in
        `t.to(torch.float32)`) or keyword (as in `torch.empty(..., dtype=torch.float32)`). Not
        `t.float()` and the like: the finite differences' precision probe rounds with them
        (tad_verify.effective_precision), and a stub that narrows that way is checked at the
        precision it computes in, as on a GPU."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = {k: widened(v) if k == "dtype" else v for k, v in (kwargs or {}).items()}
            return func(*[widened(a) for a in args], **kwargs)

    return Float64()


@contextlib.contextmanager
def executing(library):
    """Runs the stand-in's launches on the interpreter of `library` (a path to libtad), with every
    floating tensor torch makes in float64 (Float64)."""
    import triton

    if not getattr(triton, "TAD_STANDIN", False):
        raise TadError("bad_request", "the interpreter runs launches of the stand-in triton only "
                                      "(cpu mode)")
    if not os.path.exists(library):
        raise TadError("bad_request", f"no libtad at {library}")
    saved = triton.TAD_EXECUTOR
    triton.TAD_EXECUTOR = Interpreter(library)
    try:
        with _float64_mode():
            yield
    finally:
        triton.TAD_EXECUTOR = saved

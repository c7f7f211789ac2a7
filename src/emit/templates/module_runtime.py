"""Runtime of every module tad generates (src/emit/module.cpp): the launch recorder (_Recorded,
_capturing), the launch check, the gradient buffers the backward launcher allocates, and
_fit_shared_memory, which wraps each generated kernel.

A template (src/emit/templates/README.md): the library embeds the part of this file below the
`# ---- tad:embed ----` line, byte for byte, in each generated module, whose header already has the
imports. The imports above that line make this file importable on its own (tests/python/
test_templates.py) and readable by linters.
"""

import inspect
import threading

import torch


# ---- tad:embed ---- the generated module holds everything below this line, byte for byte
# ---- launch recording: the backward reuses each forward launch's grid and scalar arguments ----
class _Launch:
    def __init__(self, kernel, grid, args, options, tensors):
        self.kernel = kernel
        self.grid = grid
        self.args = args
        self.options = options
        self.tensors = tensors  # dropped once the Function has kept the temporaries it needs
        self.pre = {}  # tensor arguments as this launch saw them, saved before a launch overwrote them


_capture = threading.local()


class _capturing:
    """Records the launches; before launch m, copies the tensors snapshots[m] names: ((k, parameter), ...)."""

    def __init__(self, snapshots=None):
        self.snapshots = {} if snapshots is None else snapshots

    def __enter__(self):
        self.saved = (getattr(_capture, "launches", None), getattr(_capture, "snapshots", {}))
        _capture.launches, _capture.snapshots = [], self.snapshots
        return _capture.launches

    def __exit__(self, *exc):
        _capture.launches, _capture.snapshots = self.saved


class _Arguments:
    """A function's arguments in its signature's order, defaults applied: the values of
    inspect.Signature.bind + apply_defaults. A call with positional arguments only, of a signature
    without *args, **kwargs or keyword-only parameters, skips bind (it costs about what launching a
    kernel does, on every call of a training step)."""

    def __init__(self, signature):
        self.signature = signature
        params = list(signature.parameters.values())
        plain = all(p.kind == p.POSITIONAL_OR_KEYWORD for p in params)
        self.defaults = tuple(p.default for p in params) if plain else None
        self.required = sum(p.default is inspect.Parameter.empty for p in params)

    def __call__(self, args, kwargs):
        d = self.defaults
        if d is not None and not kwargs and self.required <= len(args) <= len(d):
            return tuple(args) + d[len(args):]
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def named(self, args, kwargs):
        """The parameters given (no defaults), by name: inspect's bind_partial(...).arguments."""
        d = self.defaults
        if d is not None and len(args) <= len(d) and all(k in self.signature.parameters for k in kwargs):
            out = dict(zip(self.signature.parameters, args))
            if any(k in out for k in kwargs):
                self.signature.bind_partial(*args, **kwargs)  # raises: a parameter given twice
            out.update(kwargs)
            return out
        return dict(self.signature.bind_partial(*args, **kwargs).arguments)


class _Recorded:
    """Launches a forward kernel and, inside _capturing(), records the launch: its grid and scalar
    arguments, including the config @triton.autotune chose and the values of @triton.heuristics."""

    def __init__(self, kernel):
        self.kernel = kernel
        fn = kernel
        self.layers = []  # autotuners and heuristics around the function, outermost first
        while not inspect.isfunction(fn):
            self.layers.append(fn)
            fn = fn.fn
        self.name = fn.__name__
        self.signature = inspect.signature(fn)
        self.arguments = _Arguments(self.signature)
        self.defaults = {k: p.default for k, p in self.signature.parameters.items()
                         if p.default is not inspect.Parameter.empty}

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            log = getattr(_capture, "launches", None)
            saved = []
            if log is not None:
                for k, name in _capture.snapshots.get(len(log), ()):
                    t = log[k].tensors[name] if k < len(log) else self._tensors(args, kwargs)[name]
                    saved.append((k, name, _snapshot(t)))
            result = self.kernel[grid](*args, **kwargs)
            if log is not None:
                log.append(self._record(grid, args, kwargs))
                for k, name, copy in saved:
                    log[k].pre[name] = copy
            return result

        return launch

    def _tensors(self, args, kwargs):
        params = self.signature.parameters
        out = {}
        for k, v in self.arguments.named(args, {k: v for k, v in kwargs.items() if k in params}).items():
            if type(v).__name__ == "TensorDescriptor" and isinstance(getattr(v, "base", None), torch.Tensor):
                v = v.base  # as _record: the backward sees a descriptor as its base tensor
            if isinstance(v, torch.Tensor):
                out[k] = v
        return out

    def _record(self, grid, args, kwargs):
        params = self.signature.parameters
        options = {k: v for k, v in kwargs.items() if k not in params}
        values = self.arguments.named(args, {k: v for k, v in kwargs.items() if k in params})
        for layer in self.layers:
            config = getattr(layer, "best_config", None)
            if config is not None:
                values.update(config.kwargs)
                for name in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
                    if getattr(config, name, None) is not None:
                        options.setdefault(name, getattr(config, name))
            for name, rule in getattr(layer, "values", {}).items():
                values.setdefault(name, rule(values))
        for name, default in self.defaults.items():
            values.setdefault(name, default)
        grid_ = grid(dict(values, **options)) if callable(grid) else grid
        grid_ = tuple(grid_) if isinstance(grid_, (tuple, list)) else (grid_,)
        for name, v in list(values.items()):
            # A host-side TensorDescriptor reaches the backward as its base tensor and scalars named
            # as tad's lowering names them (frontend::tensor_desc_field).
            if type(v).__name__ == "TensorDescriptor" and isinstance(getattr(v, "base", None), torch.Tensor):
                values[name] = v.base
                for field, items in (("shape", v.shape), ("stride", v.strides), ("block", v.block_shape)):
                    values.update({f"{name}_{field}{d}": int(x) for d, x in enumerate(items)})
        scalars = {k: v for k, v in values.items() if not isinstance(v, torch.Tensor)}
        tensors = {k: v for k, v in values.items() if isinstance(v, torch.Tensor)}
        return _Launch(self.name, grid_, scalars, options, tensors)


def _snapshot(t):
    """A copy of t, with its layout, whose contents a backward needs after a launch overwrites t."""
    return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device).copy_(t)


class _fit_shared_memory:
    """A generated kernel, launched with its forward launch's options. It holds more tiles than the
    forward, so at the forward's num_stages its software pipeline may need more shared memory than
    the GPU has: it then runs with fewer stages, down to 1 (slower, never different), and remembers
    how many fitted."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.stages = {}  # (options, tensor dtypes) -> num_stages that fitted

    def __getattr__(self, name):  # the kernel's attributes (fn, arg_names, ...); never recurses
        if name == "kernel":
            raise AttributeError(name)
        return getattr(self.kernel, name)

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            key = None
            if self.stages:  # the key costs a fifth of a launch: only once something did not fit
                key = self._key(args, kwargs)
                if key in self.stages:
                    kwargs = dict(kwargs, num_stages=self.stages[key])
            while True:
                try:
                    return self.kernel[grid](*args, **kwargs)
                except Exception as e:  # triton.runtime.errors.OutOfResources
                    stages = kwargs.get("num_stages", 3)  # triton's default on NVIDIA GPUs
                    if type(e).__name__ != "OutOfResources" or "shared memory" not in str(e) or stages <= 1:
                        raise
                    key = self._key(args, kwargs) if key is None else key
                    kwargs = dict(kwargs, num_stages=stages - 1)
                    self.stages[key] = stages - 1

        return launch

    @staticmethod
    def _key(args, kwargs):
        return tuple(sorted(kwargs.items())), tuple(a.dtype for a in args if torch.is_tensor(a))


def _check_launches(launches, kernels):
    """The backward was generated for this sequence of launches."""
    got = tuple(launch.kernel for launch in launches)
    if got != kernels:
        raise RuntimeError(f"the stub launched {got}; the backward was generated for {kernels}")


def _as_layout(g, layout):
    """The incoming gradient with the strides of the forward output it belongs to."""
    shape, stride, dtype, device = layout
    if g is None:
        return torch.zeros(shape, dtype=dtype, device=device)
    if tuple(g.stride()) == stride and g.dtype == dtype:
        return g
    out = torch.empty_strided(shape, stride, dtype=dtype, device=device)
    out.copy_(g)
    return out


def _atomic_buffer(t):
    """Gradient accumulated with atomics: float32 (float64 for float64 inputs), zero-filled, with
    t's strides (the backward addresses it with t's stride arguments)."""
    return torch.empty_strided(t.shape, t.stride(), dtype=_wide_dtype(t, True), device=t.device).zero_()


def _cotangent_buffer(g, layout):
    """The cotangent of an output that later launches' backwards add to: a float32 (float64) copy
    of the incoming gradient with the output's strides."""
    shape, stride, dtype, device = layout
    out = torch.empty_strided(shape, stride, dtype=torch.float64 if dtype == torch.float64 else torch.float32, device=device)
    return out.zero_() if g is None else out.copy_(g)


def _store_buffer(t, shape, stride):
    """Gradient written with plain stores mirroring the forward's store to a buffer of this shape
    and stride: every element is written when `t` has that layout, otherwise unwritten elements
    must read as zero."""
    out = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device)
    if tuple(t.shape) == tuple(shape) and tuple(t.stride()) == tuple(stride):
        return out
    return out.zero_()


def _wide_dtype(t, wide):
    """The tensor's dtype, or with `wide` float32 (float64 for float64): sums kept unrounded."""
    return t.dtype if not wide else torch.float64 if t.dtype == torch.float64 else torch.float32


def _covered_buffer(t, digits, holds, wide=False):
    """Gradient written with plain stores whose addresses are sums of coefficient * index, each index
    taking every value below its size (where `holds`): they reach every element, and the buffer needs
    no zeros, when those (coefficient, size) pairs are the tensor's (stride, size) pairs."""
    out = torch.empty_strided(t.shape, t.stride(), dtype=_wide_dtype(t, wide), device=t.device)
    if holds and _merged_digits(digits) == _merged_digits(zip(t.stride(), t.shape)):
        return out
    return out.zero_()


def _merged_digits(pairs):
    """(coefficient, size) pairs in order, each run where a coefficient is the previous one's times
    its size merged into one digit: one set of sums of coefficient * index, one spelling."""
    out = []
    for c, n in sorted(p for p in pairs if p[1] != 1):
        if out and out[-1][0] * out[-1][1] == c:
            out[-1] = (out[-1][0], out[-1][1] * n)
        else:
            out.append((c, n))
    return out


def _zero_buffer(t, wide=False):
    """Gradient written with plain stores by programs that may write nothing (a run-time `if`)."""
    return torch.empty_strided(t.shape, t.stride(), dtype=_wide_dtype(t, wide), device=t.device).zero_()


_SM_COUNTS = {}


def _regrid_programs(grid_size, device, tile=1):
    """Programs of a re-gridded backward, at most the forward grid's size: as many per SM as stay
    resident together, 1 to 4, taking about 8 registers per element of its largest tile (`tile`
    elements; an SM has 64K), so that none waits for a second wave and the partial buffers have no
    more rows than needed. Off the GPU (the CPU check) at most 3, so that programs loop over several
    of the forward's."""
    device = torch.device(device)
    if device.type != "cuda":
        return max(1, min(grid_size, 3))
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _SM_COUNTS:
        _SM_COUNTS[index] = torch.cuda.get_device_properties(index).multi_processor_count
    per_sm = max(1, min(4, 8192 // max(tile, 1)))
    return max(1, min(grid_size, per_sm * _SM_COUNTS[index]))


def _grid_size(grid, axis):
    return grid[axis] if axis < len(grid) else 1


def _regrid(grid, axis, programs):
    grid = list(grid) + [1] * (axis + 1 - len(grid))
    grid[axis] = programs
    return tuple(grid)


def _tdiv(a, b):
    """Integer division truncating toward zero, as the kernel's (a loop bound computed on the host)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _cdiv(a, b):
    return -(-a // b)


def _tmod(a, b):
    return a - b * _tdiv(a, b)


def _partial_buffer(like, programs, summed=False):
    """Per-program partial sums of a gradient: zeroed rows as long as the storage of its shadow
    (`like`), or, `summed`, of the tensor whose gradient is their sum alone (float32 rows)."""
    span = 1 + sum((n - 1) * s for n, s in zip(like.shape, like.stride())) if like.numel() else 0
    return torch.zeros((programs, span), dtype=_wide_dtype(like, summed), device=like.device)


def _partial_sum(t, partial):
    """A gradient that is the sum of its partial rows alone, summed in a fixed order (the same result
    every run), laid out as t."""
    return torch.as_strided(partial.sum(0), t.shape, t.stride())


def _sum_partial(shadow, partial):
    """Adds the partial rows, summed in a fixed order (the same result every run), into the shadow."""
    torch.as_strided(shadow, (partial.shape[1],), (1,)).add_(partial.sum(0))


def _as_dtype(g, t):
    return None if g is None else g.to(t.dtype)

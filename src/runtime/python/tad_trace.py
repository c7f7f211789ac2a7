"""Records what one call of a stub launched: the trace record of docs/worker-protocol.md.

Shared by the worker (tad_worker.py) and the Python binding. With real triton every launch is
recorded and then run; with tad's CPU stand-in (standin/triton) launches are only recorded.

Launches are caught by patching __getitem__ on the classes of the module's kernel objects for the
duration of the call, not by rebinding the module's globals: triton resolves @triton.jit helpers
through the kernel's globals when it compiles, and would reject a proxy found there.
"""

import array
import base64
import contextlib
import inspect
import math
import numbers
import sys
from collections import namedtuple


class TadError(Exception):
    """A failure with a protocol error kind (no_stub, no_launch, launch, ...). location: "file:line"
    of the user's code at fault where no traceback shows it (make_args returning the wrong thing)."""

    def __init__(self, kind, message, location=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.location = location


@contextlib.contextmanager
def user_code(what):
    """Runs the user's code `what` ("make_args", "stub 'f'", "reference()"): an exception it raises
    becomes TadError("exception", "<what> raised <Type>: <message>") caused by it, so that the reply
    says which of them failed (and, from the cause's traceback, where). A TadError, such as a kernel
    launch that failed inside the stub, passes as it is: it already says what failed."""
    try:
        yield
    except TadError:
        raise
    except (Exception, SystemExit) as e:
        raise TadError("exception", f"{what} raised {type(e).__name__}: {e}") from e


def find_stub(module, name):
    """The raw stub function `name` of `module`, unwrapping the @tad.autodiff decorator."""
    obj = getattr(module, name, None)
    where = getattr(module, "__file__", module.__name__)
    if obj is None:
        raise TadError("no_stub", f"{where} has no function '{name}'")
    fn = getattr(obj, "__tad_stub__", obj)
    if not callable(fn):
        raise TadError("no_stub", f"'{name}' in {where} is not a function")
    return fn


def trace_call(module, stub_fn, args, kwargs, kernel_names=None, with_data=False, grad_inputs=None,
               user_errors=False):
    """Calls stub_fn(*args, **kwargs), recording the launches of module's kernels.

    Returns (outputs, record); record follows the trace record format minus "dims", which only the
    caller knows. kernel_names, if given, limits recording to kernels with these (global or def)
    names. With grad_inputs (stub parameter names), the call runs on copies of the arguments with
    autograd on, each launch an autograd node, so that the record can say where torch code computed
    a kernel argument or an output from the grad inputs ("torch": the op; see _torch_op).
    user_errors (the worker): an exception the stub raises becomes a TadError naming the stub
    (user_code); the binding lets the caller's own exception through.
    """
    import torch

    if grad_inputs:
        args, kwargs = _differentiable_copies(stub_fn, args, kwargs, grad_inputs)
    with torch.enable_grad() if grad_inputs else contextlib.nullcontext():
        return _trace(module, stub_fn, args, kwargs, kernel_names, with_data, bool(grad_inputs),
                      user_errors)


def _trace(module, stub_fn, args, kwargs, kernel_names, with_data, autograd, user_errors):
    import torch

    classes = kernel_classes()
    kernels = {id(k): k for name, k in _module_kernels(module, classes.interface)
               if kernel_names is None or name in kernel_names
               or base_fn(k, classes).__name__ in kernel_names}
    bound = inspect.signature(stub_fn).bind(*args, **kwargs)
    bound.apply_defaults()
    params = list(bound.arguments.items())
    data = {}
    if with_data:
        for index, (_, value) in enumerate(params):
            if torch.is_tensor(value) and not value.is_complex():
                data[f"input:{index}"] = _float64_base64(value)

    recorder = _Recorder(kernels, classes, snapshots={} if with_data else None, autograd=autograd)
    guard = user_code(f"stub '{stub_fn.__name__}'") if user_errors else contextlib.nullcontext()
    with recorder.patched(), guard:
        outputs = stub_fn(*args, **kwargs)
        _synchronize(torch)
    if not recorder.launches:
        raise TadError("no_launch", f"stub '{stub_fn.__name__}' launched no @triton.jit kernel")

    returned = list(outputs) if isinstance(outputs, (tuple, list)) else (
        [] if outputs is None else [outputs])
    memory = _Memory([({"input": i}, v) for i, (_, v) in enumerate(params) if torch.is_tensor(v)]
                     + [({"output": i}, v) for i, v in enumerate(returned) if torch.is_tensor(v)],
                     [t for launch in recorder.launches for _, v in launch[3]
                      for t in [_tensor_of(v)] if t is not None])
    inputs = [{"name": name, "index": index, **_entry(value)} for index, (name, value)
              in enumerate(params)]
    for entry, (_, value) in zip(inputs, params):
        if torch.is_tensor(value):
            entry["requires_grad"] = bool(value.requires_grad)
    launches = [{"kernel": kernel, "grid": grid, "options": options,
                 "args": [{**arg_entry(name, value, memory), **_torch_entry(torch_ops.get(name)),
                           **autograd_args.get(name, {})}
                          for name, value in kernel_args]}
                for (kernel, grid, options, kernel_args), torch_ops, autograd_args
                in zip(recorder.launches, recorder.torch_ops, recorder.autograd_args)]
    record = {"stub": stub_fn.__name__, "inputs": inputs,
              "outputs": [{"index": i, **_entry(v), **_alias(v, params), **_shared(v, returned[:i]),
                           **_torch_entry(_torch_op(v) if autograd and torch.is_tensor(v) else None)}
                          for i, v in enumerate(returned)],
              "temps": [{"id": i, **_tensor_entry(t, kind=False)} for i, t in enumerate(memory.temps)],
              "launches": launches}
    if with_data:
        # Outputs and temps as the first launch that gets them sees them: what the stub's torch code
        # put there (torch.zeros for an accumulator), or garbage when a kernel writes them first.
        for kind, tensors in (("output", returned), ("temp", memory.temps)):
            for i, t in enumerate(tensors):
                if kind == "output" and _alias(t, params):
                    continue  # the input's data is its contents before the call
                seen = recorder.snapshots.get(t.data_ptr()) if torch.is_tensor(t) else None
                if seen is not None and seen[0].shape == t.shape and seen[0].stride() == t.stride():
                    data[f"{kind}:{i}"] = seen[1]
        record["data"] = data
    return outputs, record


def _module_kernels(module, interface):
    """(name, kernel) of the module's kernel objects: its globals, and the attributes of its classes
    (a @staticmethod kernel launched as Cls.k[grid] is named "Cls.k")."""
    for name, v in vars(module).items():
        if isinstance(v, interface):
            yield name, v
        elif inspect.isclass(v) and v.__module__ == module.__name__:
            for attr, a in vars(v).items():
                a = a.__func__ if isinstance(a, staticmethod) else a
                if isinstance(a, interface):
                    yield f"{name}.{attr}", a


_Classes = namedtuple("_Classes", "standin interface jit autotuner heuristics")


def kernel_classes():
    import triton
    if getattr(triton, "TAD_STANDIN", False):
        return _Classes(True, triton.KernelInterface, triton.JITFunction, triton.Autotuner,
                        triton.Heuristics)
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction, KernelInterface
    return _Classes(False, KernelInterface, JITFunction, Autotuner, Heuristics)


def base_fn(kernel, classes):
    while not isinstance(kernel, classes.jit):
        kernel = kernel.fn
    return kernel.fn


def _synchronize(torch):
    # Kernels run asynchronously: a fault shows up at the next synchronisation, so make it here.
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        try:
            torch.cuda.synchronize()
        except Exception as e:
            raise TadError("launch", f"a kernel failed: {type(e).__name__}: {e}") from e


def _differentiable_copies(stub_fn, args, kwargs, grad_inputs):
    """The call's arguments as copies (the caller's tensors stay as they were): the floating grad
    inputs as non-leaf tensors that require grad (so that the stub may still update them in place),
    every other tensor a plain copy."""
    import torch

    bound = inspect.signature(stub_fn).bind(*args, **kwargs)
    for name, value in bound.arguments.items():
        if not torch.is_tensor(value):
            continue
        copy = value.detach().clone()
        if name in grad_inputs and copy.is_floating_point():
            copy = _nodes()[0].apply(copy.requires_grad_())
        bound.arguments[name] = copy
    return bound.args, bound.kwargs


_NODES = []


def _nodes():
    """(TraceInput, TraceNode): the autograd functions of a traced call, made once torch is loaded.

    TraceInput: a grad input as the traced stub gets it, a non-leaf copy told apart from torch
    code's results. TraceNode: a launch; it may update every tensor it gets (their storages), so all
    are marked dirty and returned, and torch code after it builds on this node."""
    if not _NODES:
        import torch

        class _TraceInput(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g

        class _TraceNode(torch.autograd.Function):
            @staticmethod
            def forward(ctx, run, *tensors):
                run()
                ctx.mark_dirty(*tensors)
                return tensors

            @staticmethod
            def backward(ctx, *grads):
                return (None, *grads)

        _NODES.extend([_TraceInput, _TraceNode])
    return _NODES


def _storage_owner(t):
    """The tensor whose storage t views (t itself when it is no view)."""
    while t._base is not None:
        t = t._base
    return t


def _torch_op(t):
    """The autograd op (e.g. "SumBackward0") that computed t's storage from values depending on the
    grad inputs, when that was torch code rather than a launch or the grad input itself; None when t
    depends on no grad input or only through launches. Views are their storage's values."""
    fn = _storage_owner(t).grad_fn
    if fn is None or type(fn).__name__ in ("_TraceNodeBackward", "_TraceInputBackward"):
        return None
    return type(fn).__name__


def _autograd_entry(t):
    """What a launch's node needs of a tensor argument (docs/stub-autograd.md): whether it requires
    grad when launched, and the layout of the view the kernel gets."""
    return {"requires_grad": bool(t.requires_grad), "view_shape": list(t.shape), "view_stride": list(t.stride())}


def _torch_entry(op):
    return {} if op is None else {"torch": op}


class _Recorder:
    def __init__(self, kernels, classes, snapshots=None, autograd=False):
        self.kernels = kernels
        self.classes = classes
        self.originals = {}
        self.launches = []  # (kernel name, grid, options, [(param, value)]); keeps tensors alive
        self.snapshots = snapshots  # data_ptr -> (tensor, float64 data) before its first launch
        self.autograd = autograd  # each launch an autograd node (trace_call's grad_inputs)
        self.torch_ops = []  # per launch: {param: the torch op that computed it} (see _torch_op)
        self.autograd_args = []  # per launch: {param: what _autograd_entry says of its tensor}

    @contextlib.contextmanager
    def patched(self):
        saved = []
        for cls in {type(k) for k in self.kernels.values()}:
            saved.append((cls, cls.__dict__.get("__getitem__")))
            self.originals[cls] = cls.__getitem__
            cls.__getitem__ = self._getitem(cls.__getitem__)
        try:
            yield
        finally:
            for cls, own in reversed(saved):
                if own is None:
                    delattr(cls, "__getitem__")
                else:
                    cls.__getitem__ = own

    def _getitem(self, original):
        def getitem(kernel, grid):
            if id(kernel) not in self.kernels:
                return original(kernel, grid)
            return lambda *args, **kwargs: self._launch(kernel, grid, args, kwargs)
        return getitem

    def _launch(self, kernel, grid, args, kwargs):
        name = base_fn(kernel, self.classes).__name__
        if self.snapshots is not None:
            for v in map(_tensor_of, list(args) + list(kwargs.values())):
                if v is not None and v.data_ptr() not in self.snapshots:
                    self.snapshots[v.data_ptr()] = (v, _float64_base64(v))
        result = []

        def run():
            if not self.classes.standin:
                try:
                    result.append(self.originals[type(kernel)](kernel, grid)(*args, **kwargs))
                except Exception as e:
                    raise TadError("launch", f"kernel '{name}': {type(e).__name__}: {e}") from e

        if self.autograd:
            tensors = self._tensor_args(kernel, args, kwargs)
            self.torch_ops.append({p: op for p, t in tensors for op in [_torch_op(t)] if op is not None})
            self.autograd_args.append({p: _autograd_entry(t) for p, t in tensors})
            owners = {}
            for _, t in tensors:
                owners.setdefault(id(_storage_owner(t)), _storage_owner(t))
            _nodes()[1].apply(run, *owners.values())
        else:
            self.torch_ops.append({})
            self.autograd_args.append({})
            run()
        # After the launch: an autotuner has chosen its config by then.
        self.launches.append(describe_launch(kernel, self.classes, name, grid, args, kwargs))
        return result[0] if result else None

    def _tensor_args(self, kernel, args, kwargs):
        """(parameter, tensor) of each tensor the launch gets (a descriptor's base for a descriptor)."""
        params = inspect.signature(base_fn(kernel, self.classes)).parameters
        bound = inspect.signature(base_fn(kernel, self.classes)).bind_partial(
            *args, **{k: v for k, v in kwargs.items() if k in params})
        return [(p, t) for p, v in bound.arguments.items() for t in [_tensor_of(v)] if t is not None]



def describe_launch(kernel, classes, name, grid, args, kwargs):
    """(kernel name, grid padded to 3, options, [(parameter, value)] for every kernel parameter) of
    one launch, as triton would run it: the autotuner's choice and heuristics applied, defaults
    bound, a callable grid evaluated."""
    # Walk the wrappers outermost first, as triton's run() does, so that heuristics see the
    # autotuner's choice exactly when triton's would.
    kwargs = dict(kwargs)
    layer = kernel
    while not isinstance(layer, classes.jit):
        if isinstance(layer, classes.heuristics):
            for key, heuristic in layer.values.items():
                kwargs[key] = heuristic({**dict(zip(layer.arg_names, args)), **kwargs})
        elif isinstance(layer, classes.autotuner):
            config = getattr(layer, "best_config", None) or layer.configs[0]
            kwargs.update(config.all_kwargs())
        layer = layer.fn
    signature = inspect.signature(layer.fn)
    options = {k: _plain(kwargs.pop(k)) for k in list(kwargs) if k not in signature.parameters}
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise TadError("launch", f"kernel '{name}': {e}") from e
    bound.apply_defaults()
    meta = dict(bound.arguments)
    if callable(grid):
        grid = grid(meta)
    grid = [int(_unwrap(g)) for g in (grid if isinstance(grid, (tuple, list)) else (grid,))]
    return name, grid + [1] * (3 - len(grid)), options, list(meta.items())


class _Memory:
    """Finds which input, output or temp holds a kernel's tensor argument, by address."""

    def __init__(self, known, passed):
        self.known = known  # [(ref, tensor)]: inputs first, then outputs
        self.temps = []     # one per storage, represented by its lowest (then largest) view
        for t in passed:
            if self._find_known(t) is None:
                i = self._find_temp(t)
                if i is None:
                    self.temps.append(t)
                elif (t.data_ptr(), -t.numel()) < (self.temps[i].data_ptr(), -self.temps[i].numel()):
                    self.temps[i] = t

    def resolve(self, t):
        found = self._find_known(t)
        if found is None:
            i = self._find_temp(t)
            found = ({"temp": i}, self.temps[i])
        ref, holder = found
        return ref, (t.data_ptr() - holder.data_ptr()) // t.element_size()

    def _find_known(self, t):
        ptr = t.data_ptr()
        for ref, c in self.known:
            if c is t or (c.device == t.device and c.data_ptr() <= ptr < c.data_ptr() + _extent(c)):
                return ref, c
        for ref, c in self.known:
            if c.device == t.device and _within_storage(ptr, c):
                return ref, c
        return None

    def _find_temp(self, t):
        for i, c in enumerate(self.temps):
            if c is t or (c.device == t.device and _within_storage(t.data_ptr(), c)):
                return i
        return None


def _alias(v, params):
    """{"input": i} when output v is stub input i itself (a stub that updates i in place and
    returns it), else {}. The object, not a view: autograd marks exactly that object dirty."""
    import torch
    if not torch.is_tensor(v):
        return {}
    for i, (_, p) in enumerate(params):
        if p is v:
            return {"input": i}
    return {}


def _shared(v, earlier):
    """{"storage_of": i} when output v views the storage of earlier output i (`return y.view(-1), y`)."""
    import torch
    if not torch.is_tensor(v):
        return {}
    for i, o in enumerate(earlier):
        if torch.is_tensor(o) and o.device == v.device and _storage_owner(o) is _storage_owner(v):
            return {"storage_of": i}
    return {}


def _extent(t):
    if t.numel() == 0:
        return 0
    return (sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1) * t.element_size()


def _within_storage(ptr, t):
    storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return storage.data_ptr() <= ptr < storage.data_ptr() + storage.nbytes()


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _tensor_entry(t, kind=True):
    entry = {"kind": "tensor"} if kind else {}
    return {**entry, "dtype": dtype_name(t.dtype), "shape": list(t.shape), "stride": list(t.stride())}


def _entry(v):
    import torch
    return _tensor_entry(v) if torch.is_tensor(v) else _value_entry(v)


def _is_tensor_descriptor(v):
    """A host-side triton.tools.tensor_descriptor.TensorDescriptor (real or stand-in)."""
    import torch
    return type(v).__name__ == "TensorDescriptor" and torch.is_tensor(getattr(v, "base", None))


def _tensor_of(v):
    """The tensor a kernel argument reads or writes: itself, a descriptor's base, or None."""
    import torch
    if torch.is_tensor(v):
        return v
    return v.base if _is_tensor_descriptor(v) else None


def arg_entry(name, value, memory):
    tensor = _tensor_of(value)
    if tensor is None:
        return {"name": name, **_value_entry(value)}
    ref, offset = memory.resolve(tensor)
    entry = {"name": name, "kind": "tensor", "ref": ref, "offset": offset,
             "dtype": dtype_name(tensor.dtype)}
    if tensor is not value:
        entry.update(kind="tensor_desc", shape=[int(s) for s in value.shape],
                     strides=[int(s) for s in value.strides],
                     block_shape=[int(_unwrap(b)) for b in value.block_shape],
                     padding=str(getattr(value, "padding", "zero")))
    return entry


def _unwrap(v):
    """The value inside a tl.constexpr (real or stand-in)."""
    return v.value if type(v).__name__ == "constexpr" and hasattr(v, "value") else v


def _value_entry(v):
    v = _unwrap(v)
    if v is None:
        return {"kind": "none"}
    if isinstance(v, bool):
        return {"kind": "bool", "value": v}
    if isinstance(v, numbers.Integral):
        return {"kind": "int", "value": int(v)}
    if isinstance(v, numbers.Real):
        return {"kind": "float", "value": _json_float(float(v))}
    if isinstance(v, str):
        return {"kind": "str", "value": v}
    return {"kind": "other", "value": repr(v)}


def _json_float(x):
    # JSON has no inf/nan; a scalar argument such as -inf is still a value the compiler needs.
    return x if math.isfinite(x) else repr(x)


def _plain(v):
    v = _unwrap(v)
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return _json_float(v)
    return repr(v)


def _float64_base64(t):
    import torch
    flat = t.detach().to("cpu", torch.float64).contiguous().reshape(-1)
    values = array.array("d", flat.tolist())
    if sys.byteorder == "big":
        values.byteswap()
    return base64.b64encode(values.tobytes()).decode("ascii")

"""Runs the dataset's @triton.jit kernels on the CPU, one program at a time, tiles as torch tensors.

A test harness for machines without triton: it checks a forward file's kernels against the file's
reference() before they ever reach a GPU. It covers the subset of triton.language the dataset uses,
with triton's typing where it matters (int32 index arithmetic, float32 scalars, fp32 tl.dot), and it
is stricter than a GPU about bugs that a GPU would hide:
  - an unmasked lane that loads or stores outside its tensor raises;
  - masked-off lanes of a load without `other` are NaN, so using them shows up in the result;
  - two programs storing to one element (a race) raise, as do two lanes of one store;
  - tl.arange needs a power-of-two length and tl.dot operands at least 16 in every dim.
tl.rand is a seeded uniform stream, not triton's Philox, so masks differ from a GPU's.

Use it through the stand-in triton (src/runtime/python/standin): with emulate(): stub(...) runs
every kernel launch of the stub here instead of raising.
"""

import builtins
import contextlib
import inspect
import itertools
import types

import torch

_INT32_MAX = 2 ** 31 - 1


# ---- values ----------------------------------------------------------------------------------

def _t(x, like=None):
    """x as a tensor; a Python scalar takes like's dtype when of the same kind, else triton's
    default (int1, int32, fp32)."""
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, bool):
        return torch.tensor(x)
    if isinstance(x, int):
        if like is not None and like.dtype != torch.bool:
            return torch.tensor(x, dtype=like.dtype)
        return torch.tensor(x, dtype=torch.int32 if abs(x) <= _INT32_MAX else torch.int64)
    if isinstance(x, float):
        floating = like is not None and like.dtype.is_floating_point
        return torch.tensor(x, dtype=like.dtype if floating else torch.float32)
    raise TypeError(f"emulator: cannot make a tensor of {type(x).__name__}")


def _pair(a, b):
    """Both operands as tensors; a Python scalar takes the other operand's type."""
    if isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):
        return a, _t(b, a)
    if isinstance(b, torch.Tensor) and not isinstance(a, torch.Tensor):
        return _t(a, b), b
    return _t(a), _t(b)


class _PointerType:
    def __init__(self, dtype):
        self.element_ty = dtype


class Ptr:
    """A tile of addresses: a flat view of a tensor's storage and int64 element offsets."""

    def __init__(self, buf, offs):
        self.buf = buf
        self.offs = torch.as_tensor(offs).to(torch.int64)

    @property
    def dtype(self):
        return _PointerType(self.buf.flat.dtype)

    def __add__(self, other):
        return Ptr(self.buf, self.offs + _t(other))

    __radd__ = __add__

    def __sub__(self, other):
        return Ptr(self.buf, self.offs - _t(other))


class _Buffer:
    """One tensor's storage, with which program last stored to each element (race detection)."""

    def __init__(self, tensor):
        n = tensor.storage().size()
        self.flat = tensor.as_strided((n,), (1,), 0)
        self.owner = torch.full((n,), -1, dtype=torch.int64)


class BlockPtr:
    """tl.make_block_ptr's result; `order` only guides a GPU's memory layout, so it is dropped."""

    def __init__(self, base, shape, strides, offsets, block_shape):
        self.base = base
        self.shape = [int(s) for s in shape]
        self.strides = [int(s) for s in strides]
        self.offsets = [int(o) for o in offsets]
        self.block_shape = [int(b) for b in block_shape]

    def advance(self, delta):
        return BlockPtr(self.base, self.shape, self.strides,
                        [o + int(d) for o, d in zip(self.offsets, delta)], self.block_shape)

    def resolve(self, boundary_check):
        """(Ptr, mask) of the block; dims not boundary-checked must lie inside the shape."""
        rank = len(self.shape)
        offs = self.base.offs
        mask = torch.ones([], dtype=torch.bool)
        for d in builtins.range(rank):
            view = [1] * rank
            view[d] = self.block_shape[d]
            idx = (self.offsets[d] + torch.arange(self.block_shape[d])).reshape(view)
            inside = (idx >= 0) & (idx < self.shape[d])
            if d in boundary_check:
                mask = mask & inside
            elif not bool(inside.all()):
                raise AssertionError(f"emulator: block pointer dim {d} leaves its shape without a "
                                     "boundary check")
            offs = offs + idx * self.strides[d]
        return Ptr(self.base.buf, offs), mask.expand(self.block_shape)


class TensorDesc:
    """tl.make_tensor_descriptor's result: a block pointer placed by offsets at each access, every
    dim boundary-checked (out-of-bounds lanes read the padding and are not written)."""

    def __init__(self, base, shape, strides, block_shape, padding_option="zero"):
        if int(strides[-1]) != 1:
            raise AssertionError("emulator: a tensor descriptor's last stride must be 1")
        self.base = base
        self.shape, self.strides, self.block_shape = shape, strides, block_shape
        self.padding = padding_option
        self.dtype = base.buf.flat.dtype

    def _window(self, offsets):
        block = BlockPtr(self.base, self.shape, self.strides, offsets, self.block_shape)
        return block.resolve(range(len(self.block_shape)))

    def _value(self, value):
        if list(value.shape) != [int(b) for b in self.block_shape]:
            raise AssertionError(f"emulator: descriptor value of shape {list(value.shape)} is not "
                                 f"the block shape {self.block_shape}")
        return value

    def load(self, offsets):
        ptr, mask = self._window(offsets)
        return tl.load(ptr, mask, 0.0 if self.padding == "zero" else float("nan"))

    def store(self, offsets, value):
        ptr, mask = self._window(offsets)
        tl.store(ptr, self._value(value), mask)

    def atomic_add(self, offsets, value):
        ptr, mask = self._window(offsets)
        tl.atomic_add(ptr, self._value(value), mask)


# ---- the running program ---------------------------------------------------------------------

class _Program:
    pid = (0, 0, 0)
    grid = (1, 1, 1)
    linear = 0


_program = _Program()


def _check_bounds(ptr, mask, what):
    n = ptr.buf.flat.numel()
    bad = mask & ((ptr.offs < 0) | (ptr.offs >= n))
    if bool(bad.any()):
        first = int(ptr.offs[bad].flatten()[0])
        raise AssertionError(f"emulator: {what} outside its tensor (offset {first}, size {n}) "
                             f"in program {_program.pid}")


def _broadcast_mask(ptr, mask):
    mask = torch.ones([], dtype=torch.bool) if mask is None else _t(mask).to(torch.bool)
    offs, mask = torch.broadcast_tensors(ptr.offs, mask)
    return Ptr(ptr.buf, offs), mask


# ---- triton.language -------------------------------------------------------------------------

def _make_language():
    tl = types.SimpleNamespace()
    tl.float16, tl.bfloat16, tl.float32 = torch.float16, torch.bfloat16, torch.float32
    tl.int32, tl.int64 = torch.int32, torch.int64

    class constexpr:  # annotations only
        pass

    tl.constexpr = constexpr
    tl.program_id = lambda axis: torch.tensor(_program.pid[axis], dtype=torch.int32)
    tl.num_programs = lambda axis: torch.tensor(_program.grid[axis], dtype=torch.int32)

    def arange(start, end):
        n = int(end) - int(start)
        if n <= 0 or n & (n - 1):
            raise AssertionError(f"emulator: tl.arange({start}, {end}) is not a power-of-two range")
        return torch.arange(int(start), int(end), dtype=torch.int32)

    tl.arange = arange
    tl.zeros = lambda shape, dtype: torch.zeros([int(s) for s in shape], dtype=dtype)
    tl.full = lambda shape, value, dtype: torch.full([int(s) for s in shape], value, dtype=dtype)
    tl.cdiv = lambda a, b: (a + b - 1) // b

    def range_(*args, **_options):
        return builtins.range(*[int(a) for a in args])

    tl.range = range_
    tl.static_range = range_

    def load(ptr, mask=None, other=None, boundary_check=(), padding_option="", **_options):
        if isinstance(ptr, BlockPtr):
            ptr, mask = ptr.resolve(boundary_check)
            other = 0.0 if padding_option == "zero" else None
        ptr, mask = _broadcast_mask(ptr, mask)
        _check_bounds(ptr, mask, "load")
        values = ptr.buf.flat[torch.where(mask, ptr.offs, torch.zeros_like(ptr.offs))]
        if other is None:
            # Undefined on a GPU: NaN (or a sentinel for ints) makes any use of it visible.
            other = float("nan") if values.dtype.is_floating_point else -12345
        fill = _t(other).to(values.dtype)
        return torch.where(mask, values, fill)

    def store(ptr, value, mask=None, boundary_check=(), **_options):
        if isinstance(ptr, BlockPtr):
            ptr, mask = ptr.resolve(boundary_check)
        ptr, mask = _broadcast_mask(ptr, mask)
        value = torch.broadcast_to(_t(value), ptr.offs.shape).to(ptr.buf.flat.dtype)
        _check_bounds(ptr, mask, "store")
        offs = ptr.offs[mask]
        if offs.numel() != offs.unique().numel():
            raise AssertionError(f"emulator: two lanes of one store in program {_program.pid} "
                                 "write the same element")
        owners = ptr.buf.owner[offs]
        if bool(((owners != -1) & (owners != _program.linear)).any()):
            raise AssertionError(f"emulator: program {_program.pid} stores to an element another "
                                 "program stored to (a race)")
        ptr.buf.owner[offs] = _program.linear
        ptr.buf.flat[offs] = value[mask]

    def atomic_add(ptr, value, mask=None, sem=None, scope=None):
        ptr, mask = _broadcast_mask(ptr, mask)
        value = torch.broadcast_to(_t(value), ptr.offs.shape).to(ptr.buf.flat.dtype)
        _check_bounds(ptr, mask, "atomic_add")
        ptr.buf.flat.index_add_(0, ptr.offs[mask], value[mask])

    tl.load, tl.store, tl.atomic_add = load, store, atomic_add
    tl.make_block_ptr = lambda base, shape, strides, offsets, block_shape, order: BlockPtr(
        base, shape, strides, offsets, block_shape)
    tl.advance = lambda block, offsets: block.advance(offsets)
    tl.make_tensor_descriptor = TensorDesc

    def where(cond, a, b):
        a, b = _pair(a, b)
        dtype = torch.promote_types(a.dtype, b.dtype)
        return torch.where(_t(cond).to(torch.bool), a.to(dtype), b.to(dtype))

    tl.where = where
    tl.maximum = lambda a, b: torch.maximum(*_pair(a, b))
    tl.minimum = lambda a, b: torch.minimum(*_pair(a, b))
    for name, fn in (("exp", torch.exp), ("exp2", torch.exp2), ("log", torch.log),
                     ("log2", torch.log2), ("sqrt", torch.sqrt), ("rsqrt", torch.rsqrt),
                     ("sigmoid", torch.sigmoid), ("abs", torch.abs), ("erf", torch.erf)):
        setattr(tl, name, (lambda f: lambda x: f(_t(x)))(fn))

    def reduce(fn):
        def run(x, axis=None, keep_dims=False):
            x = _t(x)
            return fn(x) if axis is None else fn(x, dim=int(axis), keepdim=keep_dims)
        return run

    tl.sum = reduce(lambda x, **kw: torch.sum(x, **kw).to(x.dtype))
    tl.max = reduce(torch.amax)
    tl.cumsum = lambda x, axis=0: torch.cumsum(_t(x), dim=int(axis)).to(_t(x).dtype)

    def associative_scan(input, axis, combine_fn, reverse=False):
        """Sequentially along axis: element i combines the running value with element i."""
        single = not isinstance(input, tuple)
        tiles = [_t(input)] if single else [_t(v) for v in input]
        axis = int(axis)
        steps = builtins.range(tiles[0].shape[axis])
        outs = [torch.empty_like(v) for v in tiles]
        acc = None
        for i in (reversed(steps) if reverse else steps):
            cur = [v.select(axis, i) for v in tiles]
            if acc is None:
                acc = cur
            else:
                got = combine_fn(*acc, *cur)
                acc = [_t(got)] if single else [_t(v) for v in got]
            for out, value in zip(outs, acc):
                out.select(axis, i).copy_(value)
        return outs[0] if single else tuple(outs)

    tl.associative_scan = associative_scan

    def reduce_with(input, axis, combine_fn, keep_dims=False):
        """tl.reduce: the last value of the scan (any order of combining is valid for triton)."""
        scanned = associative_scan(input, axis, combine_fn)
        single = not isinstance(scanned, tuple)
        last = [v.narrow(int(axis), v.shape[int(axis)] - 1, 1) for v in ([scanned] if single else scanned)]
        last = [v if keep_dims else v.squeeze(int(axis)) for v in last]
        return last[0] if single else tuple(last)

    tl.reduce = reduce_with
    tl.zeros_like = lambda x: torch.zeros_like(_t(x))

    def dot(a, b, acc=None, **_options):
        if a.dim() != 2 or b.dim() != 2 or min(a.shape[0], a.shape[1], b.shape[1]) < 16:
            raise AssertionError(f"emulator: tl.dot of {list(a.shape)} and {list(b.shape)}: "
                                 "every dim must be at least 16")
        out = a.to(torch.float32) @ b.to(torch.float32)
        return out if acc is None else acc + out

    tl.dot = dot
    tl.trans = lambda x: _t(x).transpose(0, 1)

    def rand(seed, offsets):
        offsets = _t(offsets).to(torch.int64)
        gen = torch.Generator().manual_seed(int(seed))
        stream = torch.rand(int(offsets.max()) + 1, generator=gen)
        return stream[offsets]

    tl.rand = rand
    return tl


tl = _make_language()
libdevice = types.SimpleNamespace(tanh=lambda x: torch.tanh(_t(x)))


# ---- launching ---------------------------------------------------------------------------------

def _rebind(fn, globals_of):
    """fn's code with the emulator's tl, libdevice and helpers in place of the stand-in's."""
    import triton
    import triton.language as standin_tl
    if fn in globals_of:
        return globals_of[fn]
    env = {}
    rebuilt = types.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__, fn.__closure__)
    globals_of[fn] = rebuilt
    for name, value in fn.__globals__.items():
        if value is standin_tl:
            value = tl
        elif isinstance(value, standin_tl.constexpr):
            value = value.value
        elif isinstance(value, triton.JITFunction):
            value = _rebind(value.fn, globals_of)
        elif repr(value).startswith("triton.language.extra") and repr(value).endswith("libdevice"):
            value = libdevice
        elif repr(value).startswith("triton.language.extra") and ".libdevice." in repr(value):
            value = getattr(libdevice, repr(value).rsplit(".", 1)[1])  # imported by bare name
        env[name] = value
    return rebuilt


def _constexpr_params(fn):
    return {name for name, p in inspect.signature(fn).parameters.items()
            if getattr(p.annotation, "__name__", "") == "constexpr"}


def _launch(kernel, grid, args, kwargs, launches):
    import triton
    kwargs = dict(kwargs)
    layer = kernel
    while not isinstance(layer, triton.JITFunction):
        if isinstance(layer, triton.Heuristics):
            for key, heuristic in layer.values.items():
                kwargs[key] = heuristic({**dict(zip(layer.arg_names, args)), **kwargs})
        elif isinstance(layer, triton.Autotuner):
            kwargs.update(layer.configs[0].all_kwargs())
        layer = layer.fn
    fn = layer.fn
    signature = inspect.signature(fn)
    meta = dict(kwargs)
    for k in [k for k in kwargs if k not in signature.parameters]:
        del kwargs[k]  # launch options: num_warps, num_stages, ...
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    meta.update(bound.arguments)
    grid = grid(meta) if callable(grid) else grid
    grid = tuple(int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,)))
    grid = grid + (1,) * (3 - len(grid))
    _program.grid = grid
    launches.append((fn.__name__, dict(bound.arguments)))

    constexprs = _constexpr_params(fn)
    buffers = {}
    call = {}
    for name, value in bound.arguments.items():
        if isinstance(value, torch.Tensor):
            key = (value.storage().data_ptr(), value.dtype)
            if key not in buffers:
                buffers[key] = _Buffer(value)
            call[name] = Ptr(buffers[key], value.storage_offset())
        elif name in constexprs or value is None or isinstance(value, (bool, str)):
            call[name] = value
        else:
            call[name] = _t(value)
    run = _rebind(fn, {})
    for linear, pid in enumerate(itertools.product(*(builtins.range(g) for g in reversed(grid)))):
        _program.pid = tuple(reversed(pid))
        _program.linear = linear
        run(**call)


@contextlib.contextmanager
def emulate():
    """Within the block, launching a stand-in kernel runs it here; yields the list of launches
    as (kernel name, {parameter: value})."""
    import triton
    if not getattr(triton, "TAD_STANDIN", False):
        raise RuntimeError("the emulator runs under tad's stand-in triton only")
    launches = []
    cls = triton.KernelInterface
    saved = cls.__dict__["__getitem__"]
    cls.__getitem__ = lambda kernel, grid: (
        lambda *args, **kwargs: _launch(kernel, grid, args, kwargs, launches))
    try:
        yield launches
    finally:
        cls.__getitem__ = saved

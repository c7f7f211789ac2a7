"""A stand-in for `triton` that runs @triton.jit kernels as Python on CPU torch, one program after
another, for the bench references' numeric tests where neither a GPU nor Triton is installed.

It covers what bench/refs use: pointers are (flat tensor, offsets) pairs, tl ops are torch ops,
tl dtypes are torch dtypes, tl.dot multiplies in float32, and `range` in a kernel yields 0-d
tensors (so that `row.to(tl.int64)` works as in Triton). Not a Triton interpreter: it checks the
math, the indexing, the masks and the loop bounds, not what Triton would compile.
"""
import builtins
import itertools
import sys
import types

import torch


class Pointer:
    def __init__(self, flat, offsets):
        self.flat, self.offsets = flat, offsets
        self.dtype = types.SimpleNamespace(element_ty=flat.dtype)

    def __add__(self, other):
        return Pointer(self.flat, self.offsets + torch.as_tensor(other, dtype=torch.int64))

    __radd__ = __add__


def _load(ptr, mask=None, other=None):
    offsets = ptr.offsets
    if mask is None:
        return ptr.flat[offsets]
    mask = torch.broadcast_to(torch.as_tensor(mask), offsets.shape)
    safe = torch.where(mask, offsets, torch.zeros_like(offsets))
    value = ptr.flat[safe]
    fill = torch.full_like(value, 0 if other is None else other)
    return torch.where(mask, value, fill)


def _store(ptr, value, mask=None):
    offsets = ptr.offsets
    value = torch.broadcast_to(torch.as_tensor(value).to(ptr.flat.dtype), offsets.shape)
    if mask is not None:
        mask = torch.broadcast_to(torch.as_tensor(mask), offsets.shape)
        offsets, value = offsets[mask], value[mask]
    ptr.flat[offsets.reshape(-1)] = value.reshape(-1)


def _atomic_add(ptr, value, mask=None, sem=None):
    offsets = ptr.offsets
    value = torch.broadcast_to(torch.as_tensor(value).to(ptr.flat.dtype), offsets.shape)
    if mask is not None:
        mask = torch.broadcast_to(torch.as_tensor(mask), offsets.shape)
        offsets, value = offsets[mask], value[mask]
    ptr.flat.index_add_(0, offsets.reshape(-1), value.reshape(-1))


def _where(cond, a, b):
    a, b = torch.as_tensor(a), torch.as_tensor(b)
    dtype = a.dtype if a.is_floating_point() else b.dtype
    return torch.where(torch.as_tensor(cond), a.to(dtype), b.to(dtype))


def _language():
    tl = types.ModuleType("triton.language")
    tl.constexpr = object
    tl.float32, tl.int64, tl.float16 = torch.float32, torch.int64, torch.float16
    tl.arange = lambda lo, hi: torch.arange(lo, hi, dtype=torch.int64)
    tl.zeros = lambda shape, dtype: torch.zeros(shape, dtype=dtype)
    tl.full = lambda shape, value, dtype: torch.full(shape, value, dtype=dtype)
    tl.load, tl.store, tl.where = _load, _store, _where
    tl.sum = lambda x, axis, keep_dims=False: x.sum(dim=axis, keepdim=keep_dims)
    tl.max = lambda x, axis, keep_dims=False: x.max(dim=axis, keepdim=keep_dims).values
    tl.maximum = lambda a, b: torch.maximum(torch.as_tensor(a), torch.as_tensor(b))
    tl.minimum = lambda a, b: torch.minimum(torch.as_tensor(a), torch.as_tensor(b))
    tl.exp, tl.exp2, tl.log2, tl.log = torch.exp, torch.exp2, torch.log2, torch.log
    tl.sqrt, tl.rsqrt = torch.sqrt, torch.rsqrt
    tl.trans = lambda x: x.t()
    tl.cdiv = lambda a, b: -(-a // b)
    tl.cast = lambda x, dtype: torch.as_tensor(x).to(dtype)
    tl.atomic_add = _atomic_add
    tl.dot = lambda a, b, acc=None: a.float() @ b.float() + (0 if acc is None else acc)
    tl.range = lambda *args, **hints: _kernel_range(*args)  # num_stages and the like: hints only
    tl.program_id = lambda axis: torch.tensor(_State.pid[axis])
    tl.num_programs = lambda axis: torch.tensor(_State.grid[axis])
    return tl


class _State:
    pid, grid = (0, 0, 0), (1, 1, 1)


def _kernel_range(*args):
    return (torch.tensor(i) for i in builtins.range(*(int(a) for a in args)))


class JITFunction:
    LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas")

    def __init__(self, fn):
        self.fn = fn
        self.arg_names = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
        self.launches = []

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            meta = {k: v for k, v in kwargs.items() if k not in self.LAUNCH_OPTIONS}
            g = tuple(grid(meta) if callable(grid) else grid)
            self.launches.append((g, meta))
            g += (1, 1)
            args = [Pointer(a.view(-1), torch.zeros((), dtype=torch.int64))
                    if torch.is_tensor(a) else a for a in args]
            _State.grid = g[:3]
            scope = self.fn.__globals__
            # Only while the kernel runs: its module's host code keeps the builtin.
            before = scope.get("range")
            scope["range"] = _kernel_range
            try:
                for pid in itertools.product(*(builtins.range(n) for n in g[:3])):
                    _State.pid = pid
                    self.fn(*args, **meta)
            finally:
                if before is None:
                    del scope["range"]
                else:
                    scope["range"] = before
        return launch


class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3):
        self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages


class Autotuned:
    """@triton.autotune that always picks its first config."""

    def __init__(self, fn, config):
        self.fn, self.best_config = fn, config

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.fn[grid](*args, **self.best_config.kwargs, **kwargs)


def install():
    """Puts the stand-in into sys.modules as triton and triton.language."""
    triton = types.ModuleType("triton")
    triton.jit = lambda fn=None, **_: JITFunction(fn) if fn else JITFunction
    triton.autotune = lambda configs, **_: (lambda fn: Autotuned(fn, configs[0]))
    triton.Config = Config
    triton.next_power_of_2 = lambda n: 1 << (int(n) - 1).bit_length()
    triton.cdiv = lambda a, b: -(-a // b)
    triton.language = _language()
    extra = types.ModuleType("triton.language.extra")
    extra.libdevice = types.ModuleType("triton.language.extra.libdevice")
    triton.language.extra = extra
    sys.modules.update({"triton": triton, "triton.language": triton.language,
                        "triton.language.extra": extra,
                        "triton.language.extra.libdevice": extra.libdevice})
    return triton


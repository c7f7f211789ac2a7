"""Importing a user's forward file (or a module emitted by tad) and building its arguments."""

import importlib.util
import inspect
import itertools
import os
import re
import sys
import types

from tad_trace import TadError, user_code

TAD_DIR = os.path.dirname(os.path.abspath(__file__))
_serial = itertools.count()
_loaded = {}  # absolute path -> name of its latest module in sys.modules


def install_tad_shim():
    """Makes `import tad` / `@tad.autodiff(...)` work in user files when the binding is absent."""
    try:
        import tad  # noqa: F401
    except ImportError:
        shim = types.ModuleType("tad", "tad worker shim: @tad.autodiff only marks the stub.")

        def autodiff(fn=None, **_options):
            def mark(f):
                f.__tad_stub__ = f
                return f
            return mark if fn is None else mark(fn)

        shim.autodiff = autodiff
        sys.modules["tad"] = shim


def load_module(path):
    """Imports the file at `path` afresh under a unique module name (the file may have changed).

    The source is compiled directly rather than through the import system so that no stale
    bytecode cache can stand in for an edited file.
    """
    path = os.path.abspath(path)
    try:
        with open(path, "rb") as f:
            source = importlib.util.decode_source(f.read())
    except OSError as e:
        raise TadError("import", f"cannot import {path}: {e.strerror}") from e
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = f"tad_user_{next(_serial)}_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    add_user_dir(os.path.dirname(path))
    sys.modules.pop(_loaded.pop(path, ""), None)
    sys.modules[name] = module
    try:
        exec(compile(source, path, "exec"), module.__dict__)
    except (Exception, SystemExit) as e:
        del sys.modules[name]
        raise TadError("import", f"cannot import {path}: {type(e).__name__}: {e}") from e
    _loaded[path] = name
    return module


def add_user_dir(directory):
    """Puts a user file's directory on sys.path, so that it may import its siblings as with `python
    file.py`, but after tad's own directory (and the stand-in triton before it): a sibling named like
    one of tad's modules (tad_verify.py) must not replace it when the worker imports it later."""
    if directory in sys.path:
        return
    at = sys.path.index(TAD_DIR) + 1 if TAD_DIR in sys.path else 0
    sys.path.insert(at, directory)


def make_args(module, dims):
    """Calls the file's make_args(dims) -> (args, kwargs).

    make_args may return (args_tuple, kwargs_dict), a dict of keyword arguments, or a tuple of
    positional arguments; anything else is diagnosed here rather than as a stub failing later.
    """
    fn = getattr(module, "make_args", None)
    if not callable(fn):
        raise TadError("no_make_args", f"{module.__file__} has no make_args(dims)")
    with user_code("make_args"):
        result = fn(dict(dims))
    if isinstance(result, dict):
        return (), dict(result)
    if (isinstance(result, (tuple, list)) and len(result) == 2
            and isinstance(result[0], (tuple, list)) and isinstance(result[1], dict)):
        return tuple(result[0]), dict(result[1])
    if isinstance(result, (tuple, list)):
        return tuple(result), {}
    raise TadError("exception", f"make_args returned {type(result).__name__}, not (args, kwargs): "
                                "return a tuple of the stub's positional arguments and a dict of its "
                                "keyword arguments, e.g. ((x, w), {'eps': 1e-5})", definition(fn))


def definition(fn):
    """"file:line" where fn is defined, or None."""
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else None


def bind(stub, args, kwargs):
    """The stub's parameters bound to make_args' args/kwargs, defaults applied; a TadError naming
    make_args when they do not fit the stub's signature."""
    try:
        bound = inspect.signature(stub).bind(*args, **kwargs)
    except TypeError as e:
        raise TadError("exception", f"make_args returned arguments that stub '{stub.__name__}' does "
                                    f"not take: {e}", definition(stub)) from e
    bound.apply_defaults()
    return bound


def fresh(bound, names):
    """A copy of bound whose tensors among names are cloned: the stub updates those in place, and
    autograd wants a non-leaf there (a clone of a leaf requiring grad is one)."""
    import torch

    b = bound.signature.bind(*bound.args, **bound.kwargs)
    for name in names:
        value = b.arguments.get(name)
        if torch.is_tensor(value):
            b.arguments[name] = value.clone()
    return b

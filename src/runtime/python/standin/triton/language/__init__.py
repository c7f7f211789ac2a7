"""triton.language for the tad stand-in (a test harness): every name is an inert placeholder.

Kernel bodies never run here, so tl.load, tl.float32, tl.math.exp and the like only need to exist
when a forward file is imported. constexpr is real so that module-level constants keep their value.
"""

import sys
import types


class constexpr:
    def __init__(self, value=None):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"


class _Placeholder:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Placeholder(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        return _Placeholder(f"{self._name}(...)")

    def __getitem__(self, item):
        return _Placeholder(f"{self._name}[...]")

    def __repr__(self):
        return self._name

    # tl.float16 == tl.float16, as triton's dtypes compare (a module dispatches on dtype constexprs).
    def __eq__(self, other):
        return isinstance(other, _Placeholder) and other._name == self._name

    def __hash__(self):
        return hash(self._name)


class _InertModule(types.ModuleType):
    """A package whose every attribute is a placeholder (triton.language.extra.libdevice, ...)."""

    __path__ = []

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Placeholder(f"{self.__name__}.{attr}")


def __getattr__(attr):
    if attr.startswith("__"):
        raise AttributeError(attr)
    return _Placeholder(f"triton.language.{attr}")


for _name in ("extra", "extra.libdevice", "extra.cuda", "extra.cuda.libdevice", "math"):
    sys.modules[f"{__name__}.{_name}"] = _InertModule(f"{__name__}.{_name}")

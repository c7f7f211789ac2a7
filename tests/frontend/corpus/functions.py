# Definitions: parameters of every kind, annotations, defaults, decorators, classes.
import functools


def f0():
    pass


def f1(a):
    return a


def f2(a, b=1, c: int = 2, d: "str" = "x") -> None:
    pass


def f3(*args, **kwargs):
    pass


def f4(a, b, /, c, d=4, *, e, f=6, **kw) -> dict[str, int]:
    return {}


def f5(a=1, /, b=2, *args, c, d=None):
    pass


def f6(*, key):
    pass


def f7(a, /):
    pass


def f8(a: int, /, b: float = 1.0, *rest: str, flag: bool = False, **extra: object) -> "Result":
    pass


def f9(
    first,
    second,
    *,
    third=3,
):
    pass


def f10(*args: *Ts):
    pass


def f11(a, b=lambda x: x + 1, c=[i for i in range(3)], d={}, e=(1, 2)):
    pass


def f12(): return 42


def f13(x): y = x; return y


async def af(a, *, b=None):
    await a


@decorator
def d1():
    pass


@decorator()
def d2():
    pass


@decorator(arg, key=value)
@other.decorator
@functools.lru_cache(maxsize=None)
def d3():
    pass


@a.b.c
@d[0]
@(lambda fn: fn)
@x if y else z
@(yield_ := deco)
def d4():
    pass


@decorator
async def d5():
    pass


@dataclass
class C1:
    x: int
    y: int = 0
    z: list = field(default_factory=list)


class C2(Base1, Base2, metaclass=Meta, **options):
    """Docstring."""

    attr = 1

    def __init__(self, value: int) -> None:
        super().__init__()
        self.value = value

    @property
    def double(self) -> int:
        return self.value * 2

    @double.setter
    def double(self, v):
        self.value = v // 2

    @staticmethod
    def static(*args):
        return args

    @classmethod
    def create(cls, *args, **kwargs) -> "C2":
        return cls(*args, **kwargs)

    class Nested:
        pass

    async def amethod(self):
        async with self.lock:
            return await self.fetch()


class C3():
    pass


class C4(object): pass


class C5(*bases):
    pass


class C6(Generic[T], Protocol):
    def method(self: "C6[T]") -> T: ...


def outer():
    x = 0

    def middle():
        nonlocal x
        x += 1

        def inner():
            global G
            G = x
        return inner
    return middle


def gen_expressions(n):
    return sum(i * i for i in range(n))


def defaults_with_calls(a=f(1), b=g(h(2)), *, c=obj.attr[0]):
    pass


lambda_in_default = lambda a, b=lambda: 1: a

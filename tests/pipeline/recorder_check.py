"""Checks the launch recorder of a generated module (argv[1]) without a GPU: kernel layers shaped
like @triton.autotune(@triton.heuristics(@triton.jit)) are faked, and the recorded launch must hold
the chosen config, the heuristic values, defaults and the grid evaluated with all of them."""
import importlib.util
import sys
import types

spec = importlib.util.spec_from_file_location("generated", sys.argv[1])
generated = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generated)


def kernel_fn(X, Y, n, scale=2.0, BLOCK: "tl.constexpr" = None, EVEN: "tl.constexpr" = None):
    pass


class Jit:
    def __init__(self, fn):
        self.fn = fn
        self.launched = []

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.launched.append((grid, args, kwargs))


class Heuristics:
    def __init__(self, fn):
        self.fn = fn
        self.values = {"EVEN": lambda a: a["n"] % a["BLOCK"] == 0}

    def __getitem__(self, grid):
        return self.fn[grid]


class Autotuner:
    def __init__(self, fn):
        self.fn = fn
        self.best_config = types.SimpleNamespace(kwargs={"BLOCK": 64}, num_warps=8, num_stages=3, num_ctas=None,
                                                 maxnreg=None)

    def __getitem__(self, grid):
        return self.fn[grid]


jit = Jit(kernel_fn)
recorded = generated._Recorded(Autotuner(Heuristics(jit)))
grid = lambda meta: ((meta["n"] + meta["BLOCK"] - 1) // meta["BLOCK"],)
with generated._capturing() as launches:
    recorded[grid]("x", "y", 200)
assert len(launches) == 1, launches
launch = launches[0]
assert launch.grid == (4,), launch.grid
assert launch.args == {"X": "x", "Y": "y", "n": 200, "scale": 2.0, "BLOCK": 64, "EVEN": False}, launch.args
assert launch.options == {"num_warps": 8, "num_stages": 3}, launch.options
assert jit.launched and jit.launched[0][0] is grid, "the kernel must get the original callable grid"
with generated._capturing() as launches:
    pass
assert launches == []
print("recorder ok")

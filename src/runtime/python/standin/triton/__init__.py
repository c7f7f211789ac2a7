"""A recording stand-in for triton, used by tad to trace stubs on machines without a GPU.

This is a test harness, not a Triton replacement: kernels do not run here. It provides just enough
of the triton API for a forward file to import and for its stub to launch kernels, so that tad_trace
can record each launch (grid, arguments, constexprs). A launch outside tad_trace.trace_call goes to
TAD_EXECUTOR, which the CPU tier's whole-stub check sets to tad's interpreter (tad_interpret.py);
without one it is an error.
"""

TAD_STANDIN = True
__version__ = "stand-in"
# Called as TAD_EXECUTOR(kernel, grid, args, kwargs) for each launch while set.
TAD_EXECUTOR = None


def cdiv(x, y):
    return (x + y - 1) // y


def next_power_of_2(n):
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, **_hooks):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg

    def all_kwargs(self):
        options = {"num_warps": self.num_warps, "num_ctas": self.num_ctas,
                   "num_stages": self.num_stages, "maxnreg": self.maxnreg}
        return {**self.kwargs, **{k: v for k, v in options.items() if v is not None}}


class KernelInterface:
    """Base of every kernel object; tad_trace patches __getitem__ while it records."""

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            if TAD_EXECUTOR is not None:
                return TAD_EXECUTOR(self, grid, args, kwargs)
            raise RuntimeError(
                f"the tad stand-in for triton cannot run kernels: '{_base_fn(self).__name__}' was "
                "launched outside tad tracing (tad_trace.trace_call) with no executor (TAD_EXECUTOR)")
        return launch


def _base_fn(kernel):
    while not isinstance(kernel, JITFunction):
        kernel = kernel.fn
    return kernel.fn


class JITFunction(KernelInterface):
    def __init__(self, fn, **_options):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.arg_names = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"@triton.jit function '{self.__name__}' can only be called from a kernel")


class Autotuner(KernelInterface):
    """Stand-in mode never benchmarks: the first config is the chosen one."""

    def __init__(self, fn, configs, key, **_options):
        self.fn = fn
        self.configs = list(configs) or [Config({})]
        self.keys = key
        self.arg_names = fn.arg_names
        self.best_config = self.configs[0]


class Heuristics(KernelInterface):
    def __init__(self, fn, values):
        self.fn = fn
        self.values = dict(values)
        self.arg_names = fn.arg_names


def set_allocator(allocator):
    """Device-side tensor descriptors get scratch memory from `allocator` on a GPU; no kernel runs
    here, so nothing is allocated."""


def jit(fn=None, **options):
    if fn is None:
        return lambda f: JITFunction(f, **options)
    return JITFunction(fn, **options)


def autotune(configs, key, **options):
    return lambda fn: Autotuner(fn, configs, key, **options)


def heuristics(values):
    return lambda fn: Heuristics(fn, values)


from . import language  # noqa: E402  (triton.language is reachable as an attribute, as in triton)

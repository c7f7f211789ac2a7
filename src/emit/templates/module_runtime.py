"""Runtime of every module tad generates (src/emit/module.cpp): the launch recorder (_Recorded,
_capturing), the launch check, the gradient buffers the backward launcher allocates, and
_fit_shared_memory, which wraps each generated kernel.

A template (src/emit/templates/README.md): the library embeds the part of this file below the
`# ---- tad:embed ----` line, byte for byte, in each generated module, whose header already has the
imports. The imports above that line make this file importable on its own (tests/python/
test_templates.py) and readable by linters.
"""

import inspect
import json
import math
import os
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
        self.temps = ()  # a launch node's TAD_SAVED_ buffers (launch_nodes.py's _RecordedNode)


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


def _recorded_by_autograd(values):
    """Whether autograd records a torch.autograd.Function applied to these argument values: grad
    mode on, and one of them a tensor that requires grad (as Function.apply decides); or a
    forward-mode AD level active (dual tensors: the Function refuses them rather than drop their
    tangents; a torch without the level's record counts as one)."""
    if getattr(torch.autograd.forward_ad, "_current_level", 0) >= 0:
        return True
    return torch.is_grad_enabled() and any(isinstance(v, torch.Tensor) and v.requires_grad for v in values)


def _storage_elements(t):
    """The elements of t's storage (torch 1.13, Debian's, has no untyped_storage)."""
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage().nbytes() // t.element_size()
    return t.storage().size()


class _Recorded:
    """Launches a forward kernel and, inside _capturing(), records the launch: its grid and scalar
    arguments, including the config @triton.autotune chose and the values of @triton.heuristics."""

    def __init__(self, kernel, plain=None):
        self.kernel = kernel
        self.plain = plain  # the kernel without its residuals' stores (TAD_SAVED_), for calls not recorded
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
        self.saved = tuple(k for k in self.signature.parameters if k.startswith("TAD_SAVED_"))

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            log = getattr(_capture, "launches", None)
            if log is None and self.plain is not None:
                return self.plain[grid](*args, **kwargs)
            if self.saved:
                kwargs = self._with_saved(grid, args, kwargs)
            saved = []
            if log is not None:
                for k, name, *reads in _capture.snapshots.get(len(log), ()):
                    if reads and not self._snapshot_read(reads[0], log, k, grid, args, kwargs):
                        continue
                    t = log[k].tensors[name] if k < len(log) else self._tensors(args, kwargs)[name]
                    saved.append((k, name, _snapshot(t)))
            result = self.kernel[grid](*args, **kwargs)
            if log is not None:
                log.append(self._record(grid, args, kwargs))
                for k, name, copy in saved:
                    log[k].pre[name] = copy
            return result

        return launch

    def _snapshot_read(self, reads, log, k, grid, args, kwargs):
        """Whether the backward of launch k reads its snapshots (`reads`, the module's test of the
        recorded launches). Launch k not recorded yet is this one: recorded ahead of time, but for
        one an autotuner or heuristic decides values of only as it runs, whose copies are taken, as
        they are where the test fails (a stub that launched other kernels, a guard dividing by zero):
        the backward, or _check_launches, says what is wrong; a copy costs only time."""
        try:
            if k < len(log):
                return bool(reads(log))
            if self._decided_as_it_runs():
                return True
            return bool(reads(log + [self._record(grid, args, kwargs)]))
        except Exception:  # noqa: BLE001 -- see above
            return True

    def _decided_as_it_runs(self):
        """Whether an autotuner or heuristic around the kernel decides values only as it launches."""
        return any(hasattr(layer, a) for layer in self.layers for a in ("configs", "best_config", "values"))

    def _with_saved(self, grid, args, kwargs):
        """kwargs with a buffer for each parameter TAD_SAVED_<k> the launch leaves out, where the
        kernel stores a value its backward reads back (src/frontend/residual_stores.h): float32
        (float64 for a launch with a float64 tensor); TAD_SAVED_<k>_LIKE_<P>, a tile stored where
        the kernel stores into tensor P, from P's first element to the end of its storage; else a
        value, or a row vector of D elements for TAD_SAVED_<k>__D, per program of the grid."""
        params = self.signature.parameters
        named = self.arguments.named(args, {k: v for k, v in kwargs.items() if k in params})
        missing = [k for k in self.saved if named.get(k) is None]
        if not missing:
            return kwargs
        tensors = self._tensors(args, kwargs)  # a descriptor's base too
        # float64 where a tensor is (the CPU tier), so that no value is rounded; as the trace's buffer
        dtype = torch.float64 if any(v.dtype == torch.float64 for v in tensors.values()) else torch.float32
        device = next(iter(tensors.values())).device
        sizes = {}
        for k in missing:
            head, _, like = k.partition("_LIKE_")  # TAD_SAVED_<k>_LIKE_<P>, not a dim's name
            if like and head[len("TAD_SAVED_"):].isdigit():
                sizes[k] = _storage_elements(tensors[like]) - tensors[like].storage_offset()
            else:
                sizes[k] = self._per_program(grid, named, kwargs) * math.prod(
                    int(self._meta(named, kwargs)[d]) for d in k.split("__")[1:])
        return dict(kwargs, **{k: torch.empty(n, dtype=dtype, device=device) for k, n in sizes.items()})

    def _meta(self, named, kwargs):
        params = self.signature.parameters
        return dict(self.defaults, **named, **{k: v for k, v in kwargs.items() if k not in params})

    def _per_program(self, grid, named, kwargs):
        """The programs of the launch's grid, for buffers of a value per program."""
        if self._decided_as_it_runs():
            # tad saves such residuals only of kernels no autotuner or heuristic wraps: the
            # buffer's size needs the grid before the launch.
            raise RuntimeError(f"kernel '{self.name}': TAD_SAVED_ buffers need a grid known before the launch")
        g = grid(self._meta(named, kwargs)) if callable(grid) else grid
        return math.prod(int(x) for x in (g if isinstance(g, (tuple, list)) else (g,)))

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
    how many fitted. With `parts` (passes/write_parts.h: its writes numbered 1..parts by the
    constexpr TAD_PART) a kernel that does not fit even at one stage runs as one launch per part,
    each computing and writing its part's tensors only (slower, never different); remembered too.
    With `written` (the names of the tensors it writes, none of which it reads) it may also be tuned:
    see _Tuner. `_tiles` (a transposed kernel's free block sizes): see _retile."""

    def __init__(self, kernel, written=(), parts=0):
        self.kernel = kernel
        self.parts = parts
        self.stages = {}  # (options, tensor dtypes) -> num_stages that fitted
        self.split = set()  # (options, tensor dtypes) of launches that run in parts
        self.tuner = _Tuner(kernel, written) if written else None

    def __getattr__(self, name):  # the kernel's attributes (fn, arg_names, ...); never recurses
        if name == "kernel":
            raise AttributeError(name)
        return getattr(self.kernel, name)

    def __getitem__(self, grid):
        def launch(*args, _tiles=(), **kwargs):
            targets, g = _default_targets(_tiles, args), grid
            if self.tuner is not None and _tunes(self.kernel):
                kwargs, targets = self.tuner.options(grid, args, kwargs, _tiles, targets)
            if _tiles:
                g, args, kwargs = _retile(self.kernel, grid, args, kwargs, _tiles, targets)
            if self.parts and (_PARTS_ALWAYS[0] or self.split and self._key(args, kwargs) in self.split):
                return self._in_parts(g, args, kwargs)
            try:
                return self._fit(g, args, kwargs)
            except Exception as e:  # triton.runtime.errors.OutOfResources, before anything ran
                if not self.parts or not _out_of_shared_memory(e):
                    raise
                self.split.add(self._key(args, kwargs))
                return self._in_parts(g, args, kwargs)

        return launch

    def _fit(self, g, args, kwargs):
        key = None
        if self.stages:  # the key costs a fifth of a launch: only once something did not fit
            key = self._key(args, kwargs)
            if key in self.stages:
                kwargs = dict(kwargs, num_stages=self.stages[key])
        while True:
            try:
                return self.kernel[g](*args, **_loop_stages(self.kernel, kwargs))
            except Exception as e:
                stages = kwargs.get("num_stages", 3)  # triton's default on NVIDIA GPUs
                if not _out_of_shared_memory(e) or stages <= 1:
                    raise
                key = self._key(args, kwargs) if key is None else key
                kwargs = dict(kwargs, num_stages=stages - 1)
                self.stages[key] = stages - 1

    def _in_parts(self, g, args, kwargs):
        for part in range(1, self.parts + 1):
            self._fit(g, args, dict(kwargs, TAD_PART=part))

    @staticmethod
    def _key(args, kwargs):
        return tuple(sorted(kwargs.items())), tuple(a.dtype for a in args if torch.is_tensor(a))


# TAD_WRITE_PARTS=always: every kernel with parts runs in parts (how the CPU tier tests that path).
_PARTS_ALWAYS = [os.environ.get("TAD_WRITE_PARTS", "") == "always"]


def _out_of_shared_memory(e):
    return type(e).__name__ == "OutOfResources" and "shared memory" in str(e)


def _default_targets(tiles, args):
    """The compiler's targets of a launch's free block sizes (the `target` of each (name, where,
    target) in `tiles`), where every floating-point tensor it reads or writes has 16-bit elements:
    they were measured for the tensor cores' 16-bit shapes. Otherwise none: the sizes as recorded."""
    floats = [a for a in args if torch.is_tensor(a) and a.is_floating_point()]
    if not floats or any(a.element_size() != 2 for a in floats):
        return {}
    return {name: target for name, _, target in tiles if target}


def _retile(kernel, grid, args, kwargs, tiles, targets):
    """The launch with its free block sizes set (passes/widen.h: free_tiles): for each (name, where,
    _) of `tiles`, constexpr `name` (value v) becomes `targets[name]` (absent or 0: stays v) when
    v * count is a multiple of it, count being the grid's size along axis `where`, or the argument
    named `where` (the G of a loop over the forward's programs); count becomes v * count // target.
    The kernel then covers exactly the indices it did at v: only the tiles' boundaries move.
    Returns (grid, args, kwargs)."""
    grid, args, kwargs = list(grid), list(args), dict(kwargs)
    for name, where, _ in tiles:
        target, value = targets.get(name), kwargs.get(name)
        if not target or type(value) is not int:
            continue
        if isinstance(where, int):
            grid += [1] * (where + 1 - len(grid))
            count = grid[where]
        else:
            at = kernel.arg_names.index(where)
            count = args[at]
        if (value * count) % target:
            continue
        kwargs[name] = target
        if isinstance(where, int):
            grid[where] = value * count // target
        else:
            args[at] = value * count // target
    return tuple(grid), args, kwargs


def _loop_stages(kernel, kwargs):
    """The launch's kwargs with TAD_LOOP_STAGES, the stages of a kernel's pipelined loops
    (passes/pipeline_loops.h), set to its num_stages: lowered with it where shared memory runs out,
    tuned with it. A launch that passes it (a forward's own constexpr of that name, which the pass
    then leaves alone) keeps its value."""
    if "TAD_LOOP_STAGES" in kwargs or "TAD_LOOP_STAGES" not in getattr(kernel, "arg_names", ()):
        return kwargs
    return dict(kwargs, TAD_LOOP_STAGES=kwargs.get("num_stages", 3))  # triton's default on NVIDIA GPUs


def _tuned(*written, parts=0):
    """The decorator of a backward kernel that writes the tensors named `written` and reads none of
    them: it can be timed on copies of them, so it may be tuned. `parts`: see _fit_shared_memory."""
    return lambda kernel: _fit_shared_memory(kernel, written, parts)


# Which backward kernels are tuned on their first launch per key (_Tuner), from TAD_AUTOTUNE: "all"
# (unset, "1", "on", or any value not below: the default) every one; "auto" (or "dots") those whose
# options decide most of their time, a tl.dot (a matmul's epilogue can double its registers: 1.55x
# at 4096^3 on the H200) or a persistent loop over the forward's programs (a re-grid's
# TAD_LOOP_STAGES: token shift's ran 2.8x faster at 2 warps than at the forward's 4, float16 on the
# H200); "0", "off", "false", "no", "none" or "" (any case) none. Kernels without either gained up
# to 1.4x too (docs/compiler.md).
def _autotune_mode(value):
    value = value.strip().lower()
    return "off" if value in ("", "0", "off", "false", "no", "none") else "auto" if value in ("auto", "dots") else "all"


_AUTOTUNE = [_autotune_mode(os.environ.get("TAD_AUTOTUNE", "all"))]


def _tunes(kernel):
    mode = _AUTOTUNE[0]
    persistent = "TAD_LOOP_STAGES" in getattr(kernel, "arg_names", ())
    return mode == "all" or (mode == "auto" and ("tl.dot(" in getattr(kernel, "src", "") or persistent))


class _Tuner:
    """Chooses num_warps and num_stages of a backward kernel per (grid, tensor shapes and dtypes,
    options, device); scalar arguments are left out of the key (a seed or an offset that changes
    every step must not tune every step). On the first launch of a key it times the launch's own
    options and the candidates (num_warps 2 to 16 at the launch's stages, then stages 1 to 4 at the
    best warps; triton.testing.do_bench, L2 flushed, median) on copies of the written tensors, and
    keeps the fastest. A candidate that fails (resources, memory, compilation) counts as never
    fastest; when every one fails the launch keeps its options, and its own error surfaces from the
    real launch. Choices are kept in the module (`chosen`, reported by tad_tuned()) and on disk
    (autotune.json in TAD_CACHE_DIR, or ~/.cache/tad), keyed by the kernel's source hash and the
    GPU's name. Launches under CUDA-graph capture or on tensors that are not real CUDA tensors
    (torch.compile's fake tensors) are not tuned: they take a choice already made, or the options
    as launched. A transposed kernel's free block sizes (`tiles`, see _retile) are chosen first:
    every combination of their candidates (the launched value, and TILES) at 4 and 8 warps; then
    warps and stages at the fastest. Other block sizes are not tuned: they shape the program's work,
    which the backward shares with the forward it replays. One lock per kernel: two threads never
    tune it at once."""

    WARPS = (2, 4, 8, 16)
    STAGES = (1, 2, 3, 4)
    TILES = {"loop": (32, 64, 128), "axis": (64, 128, 256)}

    def __init__(self, kernel, written):
        self.kernel = kernel
        self.written = set(written)
        self.chosen = {}  # key -> {"options": {...}, "ms": t, "launched_ms": t0}
        self.not_on_disk = set()  # keys the file had no choice for
        self.untuned = set()  # keys tuning gave up on (no memory for the trials, every one failed)
        self.lock = threading.Lock()
        _TUNERS.append(self)

    def options(self, grid, args, kwargs, tiles=(), defaults=None):
        """The launch's options and its block sizes' targets (`defaults` where none was chosen)."""
        key = self._key(grid, args, kwargs)
        choice = self.chosen.get(key)
        if choice is None:
            with self.lock:
                choice = self._choose(key, grid, args, kwargs, tiles, defaults or {})
        if choice is None:
            return kwargs, defaults or {}
        return dict(kwargs, **choice["options"]), choice.get("tiles", defaults or {})

    def _choose(self, key, grid, args, kwargs, tiles, defaults):
        if key in self.chosen or key in self.untuned:
            return self.chosen.get(key)
        if key not in self.not_on_disk:
            found = _tune_file_get(self._disk_key(key))
            if found is not None:
                self.chosen[key] = found
                return found
            self.not_on_disk.add(key)
        if not self._can_time(args):
            return None
        choice = self._tune(grid, args, kwargs, tiles, defaults)
        if choice is None:
            self.untuned.add(key)  # not tried again: each try allocates and may empty torch's cache
            return None
        self.chosen[key] = choice
        _tune_file_put(self._disk_key(key), choice)
        return choice

    @staticmethod
    def _key(grid, args, kwargs):
        """Computed on every launch of a tuned kernel: torch.Size and dtype as they are (1.7 of 4.2
        us less than their text on the CPU); an option that cannot be hashed, by its text."""
        tensors = tuple((a.shape, a.dtype) for a in args if isinstance(a, torch.Tensor))
        dev = next((a.device.index for a in args if isinstance(a, torch.Tensor)), None)
        key = (tuple(grid), tensors, tuple(sorted(kwargs.items())), dev)
        try:
            hash(key)
        except TypeError:
            key = (tuple(grid), tensors, tuple(sorted((k, repr(v)) for k, v in kwargs.items())), dev)
        return key

    def _disk_key(self, key):
        name = getattr(getattr(self.kernel, "fn", None), "__name__", "kernel")
        gpu = torch.cuda.get_device_name(key[3]) if key[3] is not None else "?"
        return repr((name, getattr(self.kernel, "cache_key", ""), gpu, key[:3]))

    @staticmethod
    def _can_time(args):
        tensors = [a for a in args if torch.is_tensor(a)]
        if not tensors or not all(t.is_cuda and type(t) in (torch.Tensor, torch.nn.Parameter) for t in tensors):
            return False
        return not torch.cuda.is_current_stream_capturing()

    @staticmethod
    def timer(run):
        """Milliseconds of one launch: triton's do_bench (L2 flushed before each run), median."""
        bench = __import__("triton.testing", fromlist=["do_bench"]).do_bench
        return bench(run, warmup=5, rep=25, return_mode="median")

    # The trials' buffers may take at most this share of the device's free memory: a vocabulary-sized
    # float32 gradient is left untuned rather than doubled.
    MEMORY_SHARE = 0.25

    def _tune(self, grid, args, kwargs, tiles=(), defaults=None):
        names = self.kernel.arg_names
        written = [i for i, a in enumerate(args) if torch.is_tensor(a) and i < len(names) and names[i] in self.written]
        need = sum(args[i].numel() * args[i].element_size() for i in written)
        first = args[written[0]] if written else None
        if first is not None and first.is_cuda and need > self.MEMORY_SHARE * torch.cuda.mem_get_info(first.device)[0]:
            return None
        try:
            trial = [torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device=a.device) if i in written else a
                     for i, a in enumerate(args)]
        except RuntimeError:  # no memory for the copies: no tuning
            return None
        times = {}  # (options, targets) -> ms
        seen = {}  # the launch a candidate makes -> its time: candidates that launch alike are one

        def measure(options, targets):
            k = (tuple(sorted(options.items())), tuple(sorted(targets.items())))
            if k in times:
                return
            try:
                g, a, kw = _retile(self.kernel, grid, trial, dict(kwargs, **options), tiles, targets)
                kw = _loop_stages(self.kernel, kw)
                launch = (tuple(g), tuple(x for x in a if not torch.is_tensor(x)), tuple(sorted(kw.items())))
                if launch not in seen:
                    seen[launch] = self.timer(lambda: self.kernel[g](*a, **kw))
                times[k] = seen[launch]
            except Exception:  # resources, memory, compilation: this candidate is never chosen
                times[k] = float("inf")

        def best():
            k = min(times, key=times.get)
            return dict(k[0]), dict(k[1])

        launched = {"num_warps": kwargs.get("num_warps", 4), "num_stages": kwargs.get("num_stages", 3)}
        defaults = defaults or {}
        measure(launched, defaults)
        choices = [[(name, 0)] + [(name, t) for t in self.TILES["axis" if isinstance(where, int) else "loop"]]
                   for name, where, _ in tiles]
        combos = [[]]
        for c in choices:
            combos = [x + [y] for x in combos for y in c]
        for combo in combos:
            for w in (4, 8):
                measure(dict(launched, num_warps=w), {n: t for n, t in combo if t})
        options, targets = best()
        for w in self.WARPS:
            measure(dict(options, num_warps=w), targets)
        options, targets = best()
        for st in self.STAGES:
            measure(dict(options, num_stages=st), targets)
        options, targets = best()
        ms = times[(tuple(sorted(options.items())), tuple(sorted(targets.items())))]
        if ms == float("inf"):
            return None
        choice = {"options": options, "ms": ms,
                  "launched_ms": times[(tuple(sorted(launched.items())), tuple(sorted(defaults.items())))]}
        if tiles:
            choice["tiles"] = targets
        return choice


_TUNERS = []


def tad_tuned():
    """The choices of every tuned kernel of this module: kernel, key (its text), options, ms (the
    choice's time) and launched_ms (the time with the options as launched)."""
    out = []
    for t in _TUNERS:
        for key, c in t.chosen.items():
            out.append({"kernel": getattr(getattr(t.kernel, "fn", None), "__name__", "?"),
                        "key": repr(key), **c})
    return out


def _tune_path():
    base = os.environ.get("TAD_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tad")
    return os.path.join(base, "autotune.json")


def _tune_file_get(key):
    """The choice the file holds for `key`, or None (no file, no entry, or an entry not shaped
    {"options": {"num_warps": int, "num_stages": int}, ...}, with "tiles" a dict of ints if any)."""
    try:
        with open(_tune_path()) as f:
            choice = json.load(f).get(key)
        options = choice["options"]
        tiles = choice.get("tiles", {})
        if set(options) == {"num_warps", "num_stages"} and all(type(v) is int for v in options.values()) and \
                isinstance(tiles, dict) and all(type(v) is int for v in tiles.values()):
            return choice
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        pass
    return None


def _tune_file_put(key, choice):
    """Adds one choice to the file (read, update, write a temporary, rename: a reader never sees half
    a file; concurrent writers may drop each other's newest choice, which is then tuned again)."""
    path = _tune_path()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            with open(path) as f:
                table = json.load(f)
        except (OSError, ValueError):
            table = {}
        if not isinstance(table, dict):
            table = {}
        table[key] = choice
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as f:
            json.dump(table, f, indent=0, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache directory: the choice stays in the module


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


def _stash_buffer(n, layout, dtype=None):
    """A stash (passes/stash.h): n elements of `dtype`, or else float32 (float64 where the stub's
    first output is float64), uninitialised: the kernel that stores them runs before those that
    load them."""
    if dtype is None:
        dtype = torch.float64 if layout[2] == torch.float64 else torch.float32
    return torch.empty(n, dtype=dtype, device=layout[3])


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


def _wide_dtype(t, wide):
    """The tensor's dtype, or with `wide` float32 (float64 for float64): sums kept unrounded."""
    return t.dtype if not wide else torch.float64 if t.dtype == torch.float64 else torch.float32


def _covered_buffer(t, digits, holds, wide=False):
    """Gradient written with plain stores (see _zero_unless_covered)."""
    return _zero_unless_covered(_empty_buffer(t, wide), digits, holds)


def _empty_buffer(t, wide=False):
    """Gradient laid out as t, uninitialised until the run that writes it (_zero_unless_covered)."""
    return torch.empty_strided(t.shape, t.stride(), dtype=_wide_dtype(t, wide), device=t.device)


def _zero_unless_covered(out, digits, holds):
    """`out`, written next with plain stores whose addresses are sums of coefficient * index, each
    index taking every value below its size (where `holds`): they reach every element, and it needs
    no zeros, when those (coefficient, size) pairs are its (stride, size) pairs; zeroed otherwise."""
    if not (holds and _merged_digits(digits) == _merged_digits(zip(out.stride(), out.shape))):
        out.zero_()
    return out


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
    return _empty_buffer(t, wide).zero_()


_SM_COUNTS = {}


def _regrid_programs(grid, axes, device, tile=1):
    """Programs P of a backward re-gridded along `axes` of the forward's `grid`, at most G, the
    grid's size over them: with the programs of the other axes, as many per SM as stay resident
    together, 1 to 4, taking about 16 registers per element of its largest tile (`tile` elements; an
    SM has 64K: the tile, the partial sums it carries and the body's other tiles), so that none waits
    for a second wave and the partial buffers have no more rows than needed (LayerNorm's backward
    at N 4096 float16 on the H100: 2 per SM, 0.0496 ms, against 1, 0.0471; the rows' sum is 4 us of
    it at 2). Off the GPU (the CPU check) at most 3, so that programs loop over several of the
    forward's."""
    grid_size = _grid_size(grid, axes)
    kept = max(1, math.prod(grid) // max(grid_size, 1))
    device = torch.device(device)
    if device.type != "cuda":
        programs = max(1, min(grid_size, 3))
    else:
        index = device.index if device.index is not None else torch.cuda.current_device()
        if index not in _SM_COUNTS:
            _SM_COUNTS[index] = torch.cuda.get_device_properties(index).multi_processor_count
        per_sm = max(1, min(4, 4096 // max(tile, 1)))
        programs = max(1, min(grid_size, per_sm * _SM_COUNTS[index] // kept))
    if grid_size + programs >= 2**31:  # the kernel's loop counter, r < G stepping by P, is an int32
        raise RuntimeError(f"tad: a re-gridded backward loops over {grid_size} programs by {programs}: "
                           "past int32")
    return programs


def _widen(value, most, tiles):
    """A widened transposed kernel's block size (passes/widen.h: Widening): `value`, the launch's,
    times the largest power of two w <= most that keeps the gradient tiles a program owns (`tiles`,
    their dims at the launch) within 128 x 128 elements together and the widened side within 128
    (at 512, Triton 3.6 computes some float32 dots wrong on the H100; at 256, slower). passes::
    widen_factor is the same rule for the CPU oracle."""
    elements = sum(math.prod(t) for t in tiles)
    w = 1
    while w * 2 <= most and w * 2 * elements <= 128 * 128 and w * 2 * value <= 128:
        w *= 2
    return value * w


def _grid_size(grid, axes):
    """The grid's size along an axis, or the product of its sizes along a tuple of axes."""
    if isinstance(axes, int):
        return grid[axes] if axes < len(grid) else 1
    return math.prod(_grid_size(grid, a) for a in axes)


def _regrid(grid, axes, programs):
    """The grid with `programs` along an axis, or along the first of a tuple of axes and 1 along the
    others (a backward re-gridded over several axes loops over all their programs)."""
    axes = (axes,) if isinstance(axes, int) else axes
    grid = list(grid) + [1] * (max(axes) + 1 - len(grid))
    for i, a in enumerate(axes):
        grid[a] = 1 if i else programs
    return tuple(grid)


def _tdiv(a, b):
    """Integer division truncating toward zero, as the kernel's (a loop bound computed on the host)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _cdiv(a, b):
    return -(-a // b)


def _tmod(a, b):
    return a - b * _tdiv(a, b)


# passes::kMaxMappedPrograms: larger grids are not enumerated (the original kernel's backward runs).
_MAX_MAPPED_PROGRAMS = 1 << 20
_PROGRAM_BOXES = {}


def _programs(g, tiles):
    """The programs of grid g, or with `tiles` (axis, bounds) each one's iterations t in
    range(*bounds(p)) as programs whose id along axis is t; None past _MAX_MAPPED_PROGRAMS."""
    out = []
    for p in ((p0, p1, p2) for p2 in range(g[2]) for p1 in range(g[1]) for p0 in range(g[0])):
        if tiles is None:
            out.append(p)
        else:
            lo, hi, step = tiles[1](p)
            if step <= 0:
                return None
            out.extend(p[:tiles[0]] + (t,) + p[tiles[0] + 1:] for t in range(lo, hi, step))
        if len(out) > _MAX_MAPPED_PROGRAMS:
            return None
    return out


def _program_box(grid, coords, key, tiles=None):
    """The box (n_0, .., n_d-1) onto which `coords` (a program's tile coordinates from its program
    ids p) maps the programs of `grid` (with `tiles`, a persistent loop's iterations: _programs) one
    to one, or None: a backward derived from the kernel rewritten on its coordinates
    (passes/remap_programs.h) runs on that box, and only where it is one. Computed once per grid,
    coordinate function and `key` (the launch's values it reads)."""
    cache = (coords.__code__, tuple(grid), key)
    box = _PROGRAM_BOXES.get(cache, False)
    if box is not False:
        return box
    g = tuple(grid) + (1,) * (3 - len(grid))
    programs = _programs(g, tiles) if g[0] * g[1] * g[2] > 0 else None
    box = None
    if programs:
        points = [coords(p) for p in programs]
        axes = list(zip(*points))
        n = tuple(max(t) + 1 for t in axes)
        if all(min(t) >= 0 for t in axes) and math.prod(n) == len(points) and len(set(points)) == len(points):
            box = n
    _PROGRAM_BOXES[cache] = box
    return box


def _with_grid(launches, k, grid):
    """The launches with launch k's grid replaced (a remapped backward runs on its box)."""
    out = list(launches)
    l = launches[k]
    out[k] = _Launch(l.kernel, tuple(grid), l.args, l.options, l.tensors)
    out[k].pre = l.pre
    return out


def _partial_buffers(programs, *likes):
    """Per-program partial sums of gradients, given as (like, summed) pairs: for each, zeroed rows as
    long as the storage of its shadow (`like`), or, `summed`, of the tensor whose gradient is their
    sum alone (float32 rows). Those of one row length and dtype are views of one allocation: one
    fill, and one reduction after (_row_sums), where each would cost a launch of its own. A pair may
    carry what every program's flush writes of its row, (digits, holds) as _covered_buffer takes
    them: where that is every element of `like`, its rows need no zeros, and a block whose rows all
    do is left unfilled."""
    keys = [(1 + sum((n - 1) * s for n, s in zip(l[0].shape, l[0].stride())) if l[0].numel() else 0,
             _wide_dtype(l[0], l[1])) for l in likes]
    covered = [len(l) > 2 and l[3] and _merged_digits(l[2]) == _merged_digits(zip(l[0].stride(), l[0].shape))
               for l in likes]
    out = [None] * len(likes)
    for key in dict.fromkeys(keys):
        at = [i for i, k in enumerate(keys) if k == key]
        fill = torch.empty if all(covered[i] for i in at) else torch.zeros
        block = fill((len(at), programs, key[0]), dtype=key[1], device=likes[0][0].device)
        for j, i in enumerate(at):
            out[i] = block[j]
    return tuple(out)


def _row_sums(*partials):
    """Each partial buffer's rows summed in a fixed order (the same result every run); the views of
    one allocation of _partial_buffers in one reduction."""
    sums, out = {}, []
    for p in partials:
        block = p._base
        if block is None or block.dim() != 3 or p.numel() == 0:
            out.append(p.sum(0))
            continue
        if id(block) not in sums:
            sums[id(block)] = _sum_rows(block)
            root = sums[id(block)] if sums[id(block)]._base is None else sums[id(block)]._base
            root._tad_sums = True  # a block of tad's own, read only: _as_dtype may cast it whole (views name their root)
        out.append(sums[id(block)][p.storage_offset() // block.stride(0)])
    return out


def _sum_rows(block):
    """A [k, P, n] block of partial rows summed over P. On the GPU, in float64 or in float32 where
    float32 products are exact (no TF32: torch.get_float32_matmul_precision() "highest"), as the
    product of a row of ones with each [P, n] slice: cuBLAS reads the block at full bandwidth, where
    torch's sum over a middle dim took 1.4 to 3 times as long (H200, P 132 to 528); as deterministic.
    The row of ones is made once, outside CUDA-graph capture: a capture before any such call sums
    with torch (cuBLAS may not be set up yet, and a fill made then would run only at replay)."""
    exact = block.dtype == torch.float64 or (
        block.dtype == torch.float32 and torch.get_float32_matmul_precision() == "highest")
    if not block.is_cuda or not exact:
        return block.sum(1)
    key = (block.shape[1], block.dtype, block.device)
    ones = _ONES.get(key)
    if ones is None:
        if torch.cuda.is_current_stream_capturing():
            return block.sum(1)
        ones = _ONES[key] = torch.ones((1, block.shape[1]), dtype=block.dtype, device=block.device)
    return torch.matmul(ones, block).squeeze(1)


_ONES = {}  # (rows, dtype, device) -> a [1, rows] row of ones for _sum_rows


def _partial_sum(t, row_sum):
    """A gradient that is the sum of its partial rows alone (_row_sums), laid out as t."""
    return torch.as_strided(row_sum, t.shape, t.stride())


def _sum_partial(shadow, row_sum):
    """Adds the sum of the partial rows (_row_sums) into the shadow."""
    torch.as_strided(shadow, (row_sum.shape[0],), (1,)).add_(row_sum)


def _as_dtype(g, t):
    """Gradient g in its input t's dtype. A view of a block of rows' sums (_row_sums: LayerNorm's dW
    and dB, a block made for this backward and only read) casts the whole block at its first view's
    cast and keeps it on the block, so the others cast in that one launch (float16 M4096 N4096 on the
    H100: 0.0496 -> 0.0479 ms). Any other tensor (a user's gradient among them) is cast on its own."""
    if g is None or g.dtype == t.dtype:
        return g
    base = g._base
    if (base is None or not getattr(base, "_tad_sums", False) or not base.is_contiguous() or
            base.dtype != g.dtype or base.numel() > 4 * g.numel()):
        return g.to(t.dtype)
    cast = getattr(base, "_tad_cast", None)
    if cast is None or cast.dtype != t.dtype:
        cast = base.to(t.dtype)
        base._tad_cast = cast
    return torch.as_strided(cast, g.shape, g.stride(), g.storage_offset() - base.storage_offset())

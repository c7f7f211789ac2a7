"""Shared by the tad Python binding tests: paths, triton selection, visible skips.

`tad` must be importable (installed, or PYTHONPATH pointing at a build; run_tests.sh does that).
"""

import importlib.util
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(REPO, "examples")
STANDIN = os.path.join(REPO, "src", "runtime", "python", "standin")

# Forward files import triton. Without it (the CPU machines) the recording stand-in takes its place:
# stubs can then be traced, but kernels cannot run.
try:
    import triton
except ImportError:
    sys.path.insert(0, STANDIN)
    import triton
STANDIN_TRITON = bool(getattr(triton, "TAD_STANDIN", False))


def skip(test, reason):
    """Skips with a line on stderr in every verbosity: a skipped test must never pass unseen."""
    print(f"\n[SKIP] {test.id()}: {reason}", file=sys.stderr, flush=True)
    raise unittest.SkipTest(reason)


def gpu_unavailable_reason():
    """Why real-kernel tests cannot run here, or None when they can."""
    import torch
    if STANDIN_TRITON:
        return "triton is not installed (the CPU stand-in cannot run kernels)"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


_serial = 0


def import_file(path):
    """Imports a forward file as a fresh module registered in sys.modules, as `import` would: the
    tracer finds the stub's kernels through sys.modules[stub.__module__]."""
    global _serial
    _serial += 1
    name = f"tad_test_{_serial}_{os.path.splitext(os.path.basename(path))[0]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

"""tad (Triton AutoDiff): generates, verifies and benchmarks backward passes for Triton forwards.

    import tad

    @tad.autodiff(grad_inputs=("x", "weight", "bias"))
    def layernorm(x, weight, bias, eps=1e-5):
        ...  # allocates outputs and launches @triton.jit kernels

    y = layernorm(x, w, b)   # differentiable: y.backward() runs tad's generated backward

`Session` drives the library step by step (load_forward, generate, verify, bench, snapshots).
Failures raise `tad.Error` or one of its subclasses, one per tad_status.
"""

from ._tad import (
    CancelledError,
    Error,
    FileError,
    InternalError,
    InvalidArgumentError,
    MismatchError,
    NoGPUError,
    NoKernelError,
    NotFoundError,
    ParseError,
    Session,
    StateError,
    UnsupportedError,
    WorkerError,
    WorkerTimeoutError,
    version,
)
from ._autodiff import autodiff

__version__ = version()

__all__ = [
    "CancelledError",
    "Error",
    "FileError",
    "InternalError",
    "InvalidArgumentError",
    "MismatchError",
    "NoGPUError",
    "NoKernelError",
    "NotFoundError",
    "ParseError",
    "Session",
    "StateError",
    "UnsupportedError",
    "WorkerError",
    "WorkerTimeoutError",
    "autodiff",
    "version",
]

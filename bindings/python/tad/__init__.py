"""tad (Triton AutoDiff): generates, verifies and benchmarks backward passes for Triton forwards.

    import tad

    @tad.autodiff(grad_inputs=("x", "weight", "bias"))
    def layernorm(x, weight, bias, eps=1e-5):
        ...  # allocates outputs and launches @triton.jit kernels

    y = layernorm(x, w, b)   # differentiable: y.backward() runs tad's generated backward

The first differentiable call of each specialization checks the generated backward against its
forward mode (tad.GradientCheckError when they disagree; check=False or TAD_CHECK=0 turn it off).

`Session` drives the library step by step (load_forward, generate, verify, bench, snapshots,
retrieve); `dataset_list()` lists the dataset retrieval searches.
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
    dataset_list,
    version,
)
from ._autodiff import autodiff
from ._check import GradientCheckError, GradientCheckWarning

__version__ = version()

__all__ = [
    "CancelledError",
    "Error",
    "FileError",
    "GradientCheckError",
    "GradientCheckWarning",
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
    "dataset_list",
    "version",
]

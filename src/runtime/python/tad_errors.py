"""Turning an exception into the protocol's error object {kind, message, traceback}."""

import traceback

from tad_trace import TadError


def is_oom(exc):
    import torch
    oom = getattr(torch.cuda, "OutOfMemoryError", ())
    return isinstance(exc, oom) or (isinstance(exc, RuntimeError) and "out of memory" in str(exc))


def error_of(exc):
    if isinstance(exc, TadError):
        cause = exc.__cause__
        kind = "oom" if cause is not None and is_oom(cause) else exc.kind
        tb = "" if cause is None else "".join(traceback.format_exception(cause))
        return {"kind": kind, "message": exc.message, "traceback": tb}
    return {"kind": "oom" if is_oom(exc) else "exception",
            "message": f"{type(exc).__name__}: {exc}",
            "traceback": "".join(traceback.format_exception(exc))}

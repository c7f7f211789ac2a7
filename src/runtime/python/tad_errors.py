"""Turning an exception into the protocol's error object {kind, message, traceback, location}."""

import os
import sys
import sysconfig
import traceback

from tad_trace import TadError

HERE = os.path.dirname(os.path.abspath(__file__))
# Frames in these directories are tad's (the worker, the stand-in triton) or libraries', not the
# user's: the location an error reports is the innermost frame outside them.
_NOT_USER = tuple(os.path.join(os.path.abspath(d), "") for d in
                  {HERE, sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")}
                  if d)


def is_oom(exc):
    """CUDA out of memory, or a host allocation that failed (CPU torch: "can't allocate memory")."""
    import torch
    oom = getattr(torch.cuda, "OutOfMemoryError", ())
    if isinstance(exc, (oom, MemoryError)):
        return True
    return isinstance(exc, RuntimeError) and any(s in str(exc) for s in ("out of memory", "can't allocate memory"))


def is_user_file(path):
    if not path or path.startswith("<"):
        return False
    path = os.path.abspath(path)
    parts = path.split(os.sep)
    return not path.startswith(_NOT_USER) and "site-packages" not in parts and "dist-packages" not in parts


def user_location(exc):
    """"file:line" of the innermost frame of user code where exc (or what caused it) was raised, or
    None. A TadError raised inside the stub has the stub's frame in its own traceback and the
    failing library call in its cause's, so the frames of the whole chain count, outermost first."""
    frames = []
    chain = exc
    while chain is not None:
        if getattr(chain, "location", None):
            return chain.location
        if isinstance(chain, SyntaxError) and chain.filename and chain.lineno:
            return f"{chain.filename}:{chain.lineno}"
        frames += traceback.extract_tb(chain.__traceback__)
        chain = chain.__cause__
    user = [f for f in frames if is_user_file(f.filename)]
    return f"{user[-1].filename}:{user[-1].lineno}" if user else None


def causes(exc):
    """What caused exc, nearest first."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
        yield exc


def error_of(exc):
    if isinstance(exc, TadError):
        cause = exc.__cause__
        kind = "oom" if any(is_oom(c) for c in causes(exc)) else exc.kind
        message = exc.message
        # With the chain: the TadError's own frames hold the stub's line of a failed launch.
        tb = "" if cause is None else "".join(traceback.format_exception(exc))
    else:
        kind = "oom" if is_oom(exc) else "exception"
        message = f"{type(exc).__name__}: {exc}"
        tb = "".join(traceback.format_exception(exc))
    location = user_location(exc)
    error = {"kind": kind, "message": message + (f" (at {location})" if location else ""),
             "traceback": tb}
    if location:
        error["location"] = location
    return error


def log_error(error, context):
    """The error, with its full traceback, on stderr: the session's worker.log keeps what the reply
    only summarizes."""
    print(f"tad worker: {context}: {error['kind']}: {error['message']}", file=sys.stderr)
    if error.get("traceback"):
        print(error["traceback"].rstrip("\n"), file=sys.stderr)
    sys.stderr.flush()

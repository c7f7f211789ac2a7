"""tad's worker process: runs user code (torch, triton) for the library over JSON lines.

    python3 tad_worker.py --mode {cpu,gpu,auto} [--device N]

The protocol is docs/worker-protocol.md. The worker never dies on an exception of user code: every
failure becomes an error reply. Only the standard library is imported before torch, so that a
missing torch is reported as an error reply rather than a crash.
"""

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import select
import signal
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
CPU_ONLY = "verify on the GPU needs triton and CUDA{why}; use the CPU interpreter (--cpu)"


class Protocol:
    """The real stdin/stdout, kept for JSON lines; user code gets /dev/null and stderr instead."""

    def __init__(self):
        self.incoming = os.fdopen(os.dup(0), "rb")
        self.outgoing = os.fdopen(os.dup(1), "w", encoding="utf-8")
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)  # also catches output written below Python (compilers, C extensions)
        sys.stdin = open(os.devnull)
        sys.stdout = sys.stderr

    def read(self):
        return self.incoming.readline()

    def watch_parent(self):
        """Kills the worker's process group (the worker, and whatever user code started) when the
        library's end of the request pipe closes: the library died, and user code may be running
        (a loop the main thread would never leave to read the pipe). The library's own safeguards
        (docs/worker-protocol.md, "Lifetime") do not cover a library thread that ends, or what
        the worker started. Only a worker that leads its own group, as the library starts it,
        watches: one run by hand shares its group with the shell's job."""
        if os.getpgrp() != os.getpid():
            return

        def watch():
            poller = select.poll()
            poller.register(self.incoming.fileno(), 0)  # POLLHUP is reported whatever the mask
            while True:
                for _, event in poller.poll():
                    if event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                        os.killpg(os.getpgrp(), signal.SIGKILL)

        threading.Thread(target=watch, name="tad-parent-watch", daemon=True).start()

    def send(self, message):
        self.outgoing.write(json.dumps(jsonable(message), allow_nan=False) + "\n")
        self.outgoing.flush()


def jsonable(value):
    """JSON has no NaN/Inf (an error that is not a number reads as null) and no tuples."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


class Failure(Exception):
    """An error reply prepared before user code runs (startup, bad request)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.reply = {"kind": kind, "message": message, "traceback": ""}


class Worker:
    def __init__(self, mode, device):
        self.mode = mode
        self.device_index = device
        self.startup_error = None
        self.no_gpu_reason = ""  # why an auto-mode worker runs on the CPU
        try:
            self._import_runtime()
        except Failure as e:
            self.startup_error = e

    def _import_runtime(self):
        try:
            import torch
        except Exception as e:
            raise Failure("import", f"cannot import torch: {e}")
        self.torch = torch
        cuda = torch.cuda.is_available()
        if self.mode == "gpu" and not cuda:
            raise Failure("no_gpu", "the worker was started for the GPU, and torch sees no CUDA "
                                    "device")
        if not cuda and self.mode == "auto":
            self.no_gpu_reason = "torch sees no CUDA device"
        if self.mode in ("gpu", "auto") and cuda:
            try:
                import triton  # noqa: F401
                import triton.testing  # noqa: F401
                self.mode = "gpu"
            except Exception as e:
                if self.mode == "gpu":
                    raise Failure("import", f"cannot import triton: {e}")
                self.no_gpu_reason = f"cannot import triton: {e}"
        if self.mode != "gpu":
            self.mode = "cpu"
            # torch may have imported the real triton already (it probes for it where CUDA is):
            # the forward file and the interpreter must see the stand-in.
            for name in [m for m in sys.modules if m == "triton" or m.startswith("triton.")]:
                del sys.modules[name]
            sys.path.insert(0, os.path.join(HERE, "standin"))
        try:
            import triton
        except Exception as e:
            raise Failure("import", f"cannot import triton: {e}")
        self.triton = triton
        if self.mode == "gpu":
            try:
                torch.cuda.set_device(self.device_index)
            except Exception as e:
                raise Failure("no_gpu", f"cannot use CUDA device {self.device_index}: {e}")
        import tad_userfile
        tad_userfile.install_tad_shim()

    @property
    def device(self):
        return "cuda" if self.mode == "gpu" else "cpu"

    def handle(self, request, progress):
        command = request.get("cmd")
        handler = getattr(self, f"cmd_{command}", None) if isinstance(command, str) else None
        if handler is None:
            raise Failure("bad_request", f"unknown command {command!r}")
        if self.startup_error is not None and command != "shutdown":
            raise self.startup_error
        return handler(request, progress)

    def cuda_broken(self):
        """After a failure: is the CUDA context unusable (a faulting kernel poisons it)?"""
        if self.mode != "gpu" or self.startup_error is not None:
            return False
        try:
            self.torch.cuda.synchronize()
            return False
        except Exception:
            return True

    def release(self):
        gc.collect()
        if self.mode == "gpu" and self.startup_error is None:
            self.torch.cuda.empty_cache()

    def cmd_hello(self, request, progress):
        torch = self.torch
        return {"python": platform.python_version(), "torch": torch.__version__,
                "triton": self.triton.__version__, "mode": self.mode,
                "device": torch.cuda.get_device_name(self.device_index)
                if self.mode == "gpu" else None}

    def cmd_shutdown(self, request, progress):
        return {}

    def cmd_info(self, request, progress):
        import tad_userfile
        module = tad_userfile.load_module(arg(request, "file", str))
        dtypes = getattr(module, "DTYPES", None)
        return {"sweep": list(getattr(module, "SWEEP", None) or []),
                "dtypes": None if dtypes is None else [str(d).replace("torch.", "") for d in dtypes],
                "has_make_args": callable(getattr(module, "make_args", None)),
                "has_reference": callable(getattr(module, "reference", None)),
                "has_bytes": callable(getattr(module, "bytes", None)),
                "has_flops": callable(getattr(module, "flops", None))}

    def cmd_trace(self, request, progress):
        import tad_trace
        import tad_userfile
        path, stub_name = arg(request, "file", str), arg(request, "stub", str)
        dims = {"dtype": "float32", **arg(request, "dims", dict)}
        kernels = request.get("kernels")
        progress(f"importing {path}", 0.0)
        module = tad_userfile.load_module(path)
        stub = tad_trace.find_stub(module, stub_name)
        progress("make_args", 0.3)
        self.seed(request.get("seed", 0))
        # meta: shapes without storage, nothing allocated (factories that name no device too); the
        # record's kernels and constexprs are right, its storages are not (every pointer is 0).
        meta = self.torch.device("meta") if request.get("meta", False) else None
        with meta if meta is not None and hasattr(meta, "__enter__") else contextlib.nullcontext():
            device = "meta" if meta is not None else self.device
            args, kwargs = tad_userfile.make_args(module, {**dims, "device": device})
            tad_userfile.bind(stub, args, kwargs)
            progress(f"running stub '{stub_name}'", 0.6)
            _, record = tad_trace.trace_call(module, stub, args, kwargs, kernel_names=kernels,
                                             with_data=bool(request.get("with_data", False)) and meta is None,
                                             grad_inputs=request.get("grad_inputs"), user_errors=True)
        return {"stub": record.pop("stub"), "dims": dims, **record}

    def cmd_sizes(self, request, progress):
        """The elements of the tensors make_args builds for dims, built on the meta device (shapes
        without storage; since torch 2.0 also for factories that name no device), so that nothing
        is allocated."""
        import tad_userfile
        module = tad_userfile.load_module(arg(request, "file", str))
        dims = {"dtype": "float32", **arg(request, "dims", dict), "device": "meta"}
        meta = self.torch.device("meta")
        with meta if hasattr(meta, "__enter__") else contextlib.nullcontext():
            args, kwargs = tad_userfile.make_args(module, dims)
        values = list(args) + list(kwargs.values())
        return {"elements": sum(v.numel() for v in values if self.torch.is_tensor(v))}

    def cmd_verify(self, request, progress):
        # With "interpreter" (a path to libtad), cpu mode runs every launch on tad's interpreter:
        # the CPU tier's check of the whole stub.
        library = request.get("interpreter")
        if self.mode != "gpu" and not library:
            raise Failure("no_gpu", CPU_ONLY.format(why=f" ({self.no_gpu_reason})" if self.no_gpu_reason else ""))
        import tad_interpret
        import tad_verify
        module, stub, generated, grad_inputs = self.load_candidate(request)
        with tad_interpret.executing(library) if library else contextlib.nullcontext():
            return tad_verify.verify(module, stub, generated, arg(request, "dims_list", list),
                                     arg(request, "dtypes", list), request.get("seed", 0), grad_inputs,
                                     self.device, progress, request.get("tolerances"),
                                     request.get("reference", True))

    def cmd_bench(self, request, progress):
        if self.mode != "gpu":
            raise Failure("no_gpu", "bench needs triton and CUDA" +
                          (f" ({self.no_gpu_reason})" if self.no_gpu_reason else "") + "; the worker runs in cpu mode")
        import tad_bench
        module, stub, generated, grad_inputs = self.load_candidate(request)
        reps = request.get("reps") or 100

        def timer(fn):
            return self.triton.testing.do_bench(fn, warmup=25, rep=reps, return_mode="median")

        return tad_bench.bench(module, stub, generated, arg(request, "dims_list", list),
                               arg(request, "dtypes", list), grad_inputs, self.device, timer,
                               progress)

    def cmd_export(self, request, progress):
        if self.mode != "gpu":
            raise Failure("no_gpu", "export compiles the backward with triton on the GPU" +
                          (f" ({self.no_gpu_reason})" if self.no_gpu_reason else "") + "; the worker runs in cpu mode")
        import tad_export
        module, stub, generated, grad_inputs = self.load_candidate(request)
        return tad_export.export(module, stub, generated, arg(request, "dims_list", list),
                                 arg(request, "dtypes", list), grad_inputs, arg(request, "kernels", list),
                                 arg(request, "out_dir", str), self.device, progress)

    def load_candidate(self, request):
        import tad_trace
        import tad_userfile
        module = tad_userfile.load_module(arg(request, "file", str))
        stub = tad_trace.find_stub(module, arg(request, "stub", str))
        generated = tad_userfile.load_module(arg(request, "generated", str))
        grad_inputs = request.get("grad_inputs") or getattr(generated, "GRAD_INPUTS", None)
        if not grad_inputs:
            raise Failure("bad_request", "no gradient inputs: the request has no grad_inputs and "
                                         "the generated module no GRAD_INPUTS")
        return module, stub, generated, list(grad_inputs)

    def seed(self, seed):
        import random
        random.seed(seed)
        self.torch.manual_seed(seed)


def arg(request, name, kind):
    value = request.get(name)
    if not isinstance(value, kind):
        raise Failure("bad_request", f"'{request.get('cmd')}' needs argument '{name}' "
                                     f"({kind.__name__})")
    return value


def serve(protocol, worker):
    while True:
        line = protocol.read()
        if not line:
            return
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("a request is a JSON object")
        except ValueError as e:
            protocol.send({"id": None, "ok": False,
                           "error": {"kind": "bad_request", "message": f"bad request line: {e}",
                                     "traceback": ""}})
            continue
        rid = request.get("id")

        def progress(message, fraction, rid=rid):
            protocol.send({"id": rid, "progress": {"message": message, "fraction": fraction}})

        try:
            reply = {"id": rid, "ok": True, "result": worker.handle(request, progress)}
        except Failure as e:
            reply = {"id": rid, "ok": False, "error": e.reply}
        except (Exception, SystemExit) as e:
            from tad_errors import error_of, log_error
            reply = {"id": rid, "ok": False, "error": error_of(e)}
            log_error(reply["error"], f"'{request.get('cmd')}' failed")
        restart = not reply["ok"] and worker.cuda_broken()
        if restart:
            reply["restart"] = True
        protocol.send(reply)
        if restart or request.get("cmd") == "shutdown":
            return
        worker.release()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("cpu", "gpu", "auto"), default="auto")
    parser.add_argument("--device", type=int, default=0)
    options = parser.parse_args()
    protocol = Protocol()
    protocol.watch_parent()
    serve(protocol, Worker(options.mode, options.device))


if __name__ == "__main__":
    main()

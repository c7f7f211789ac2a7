"""tad.Session and the error classes: the C binding over tad.h."""

import ast
import math
import os
import pathlib
import re
import shutil
import signal
import sys
import tempfile
import unittest

import _support
import tad

LAYERNORM = os.path.join(_support.EXAMPLES, "layernorm.py")
SMALL = {"M": 4, "N": 48}


class TempDir(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tad-py-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def session(self, **options):
        # The worker runs in this interpreter, which has torch; tests never fall back to $PATH.
        options.setdefault("python", sys.executable)
        session = tad.Session(work_dir=os.path.join(self.tmp, "work"), **options)
        self.addCleanup(session.close)
        return session


class Module(unittest.TestCase):
    def test_version_is_the_libraries(self):
        with open(os.path.join(_support.REPO, "include", "tad.h"), encoding="utf-8") as f:
            header = f.read()
        parts = [re.search(rf"#define TAD_VERSION_{p}\s+(\d+)", header).group(1)
                 for p in ("MAJOR", "MINOR", "PATCH")]
        self.assertEqual(tad.version(), ".".join(parts))
        self.assertEqual(tad.__version__, tad.version())

    def test_extension_uses_the_stable_abi(self):
        self.assertTrue(tad._tad.__file__.endswith(".abi3.so"), tad._tad.__file__)

    def test_error_classes(self):
        expected = {
            tad.InvalidArgumentError: (-1, "TAD_ERR_INVALID_ARGUMENT"),
            tad.FileError: (-2, "TAD_ERR_IO"),
            tad.ParseError: (-3, "TAD_ERR_SYNTAX"),
            tad.UnsupportedError: (-4, "TAD_ERR_UNSUPPORTED"),
            tad.NoKernelError: (-5, "TAD_ERR_NO_KERNEL"),
            tad.WorkerError: (-6, "TAD_ERR_WORKER"),
            tad.WorkerTimeoutError: (-7, "TAD_ERR_TIMEOUT"),
            tad.MismatchError: (-8, "TAD_ERR_MISMATCH"),
            tad.NotFoundError: (-9, "TAD_ERR_NOT_FOUND"),
            tad.StateError: (-10, "TAD_ERR_STATE"),
            tad.CancelledError: (-11, "TAD_ERR_CANCELLED"),
            tad.NoGPUError: (-12, "TAD_ERR_NO_GPU"),
            tad.InternalError: (-99, "TAD_ERR_INTERNAL"),
        }
        self.assertTrue(issubclass(tad.Error, RuntimeError))
        for cls, (status, name) in expected.items():
            self.assertTrue(issubclass(cls, tad.Error), cls)
            self.assertEqual((cls.status, cls.status_name), (status, name), cls)
            self.assertEqual(cls.__module__, "tad")
            self.assertIsNone(cls("m").report)
        self.assertTrue(issubclass(tad.InvalidArgumentError, ValueError))
        self.assertFalse(issubclass(tad.FileError, ValueError))


class Errors(TempDir):
    def test_missing_file_is_an_io_error_with_the_message(self):
        missing = os.path.join(self.tmp, "missing.py")
        with self.assertRaises(tad.FileError) as caught:
            self.session().load_forward(missing)
        e = caught.exception
        self.assertIsInstance(e, tad.Error)
        self.assertIsInstance(e, RuntimeError)
        self.assertEqual(e.status, -2)
        self.assertEqual(e.status_name, "TAD_ERR_IO")
        self.assertIn(missing, str(e))
        self.assertIsNone(e.report)

    def test_paths_may_be_path_objects(self):
        with self.assertRaises(tad.FileError):
            self.session().load_forward(pathlib.Path(self.tmp) / "missing.py")

    def test_syntax_error_names_the_file(self):
        with self.assertRaises(tad.ParseError) as caught:
            self.session().load_forward("broken.py", source="def f(:\n    pass\n")
        self.assertEqual(caught.exception.status_name, "TAD_ERR_SYNTAX")
        self.assertIn("broken.py:1:", str(caught.exception))

    def test_generate_before_load_is_a_state_error(self):
        with self.assertRaises(tad.StateError) as caught:
            self.session().generate(dims=SMALL)
        self.assertIn("tad_load_forward", str(caught.exception))

    def test_unknown_backend_is_an_invalid_argument(self):
        session = self.session()
        session.load_forward(LAYERNORM)
        with self.assertRaises(ValueError) as caught:
            session.generate(dims=SMALL, backend="nope")
        self.assertIsInstance(caught.exception, tad.InvalidArgumentError)
        self.assertIn("'nope'", str(caught.exception))

    def test_argument_types_are_checked_before_the_call(self):
        session = self.session()
        with self.assertRaisesRegex(TypeError, "dims must be a dict or None, not list"):
            session.generate(dims=[SMALL])
        with self.assertRaisesRegex(TypeError, "launch must be a dict or None, not str"):
            session.generate(launch="{}")
        with self.assertRaisesRegex(TypeError, "dims must be a list, a dict or None, not int"):
            session.verify(dims=3)
        with self.assertRaises(TypeError):
            session.verify(dtypes=5)
        with self.assertRaisesRegex(ValueError, "seed"):
            session.verify(seed=-1)
        with self.assertRaisesRegex(ValueError, "seed"):
            session.verify(seed=2 ** 32)
        with self.assertRaisesRegex(ValueError, "max_elements"):
            session.verify(max_elements=-1)
        with self.assertRaisesRegex(ValueError, "reps"):
            session.bench(reps=-1)
        with self.assertRaisesRegex(ValueError, "NUL"):
            session.load_forward("x.py", source="a\0b")
        with self.assertRaisesRegex(TypeError, "id must be a str"):
            session.rollback(7)


class Options(TempDir):
    def test_keyword_only(self):
        with self.assertRaises(TypeError):
            tad.Session(self.tmp)
        with self.assertRaises(TypeError):
            tad.Session(work_dir=self.tmp, colour="blue")

    def test_ranges(self):
        work = os.path.join(self.tmp, "w")
        for bad in ({"device_index": -1}, {"worker_timeout_s": -1.0},
                    {"worker_timeout_s": math.nan}, {"startup_timeout_s": math.inf},
                    {"startup_timeout_s": -0.5}):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                tad.Session(work_dir=work, **bad)
        self.assertFalse(os.path.exists(work), "a rejected session must not create its directory")

    def test_types(self):
        with self.assertRaisesRegex(TypeError, "progress must be callable or None, not int"):
            tad.Session(work_dir=self.tmp, progress=42)
        with self.assertRaises(TypeError):
            tad.Session(work_dir=self.tmp, device_index="0")
        with self.assertRaises(TypeError):
            tad.Session(work_dir=3.5)

    def test_valid_options_open_the_directory(self):
        work = pathlib.Path(self.tmp) / "nested" / "work"
        with tad.Session(work_dir=work, python=sys.executable, device_index=1,
                         worker_timeout_s=5, startup_timeout_s=5.5, progress=None) as session:
            self.assertEqual(session.snapshots(), [])
        self.assertTrue(work.is_dir())

    def test_work_dir_that_is_a_file(self):
        path = os.path.join(self.tmp, "file")
        open(path, "w").close()
        with self.assertRaises(tad.FileError):
            tad.Session(work_dir=path)

    def test_closed_session(self):
        session = tad.Session(work_dir=self.tmp)
        with session as entered:
            self.assertIs(entered, session)
        with self.assertRaisesRegex(ValueError, "closed"):
            session.snapshots()
        session.close()  # closing twice is harmless
        with self.assertRaisesRegex(ValueError, "closed"):
            with session:
                pass


class Progress(TempDir):
    """generate() reports "trace" before it starts the worker, so these need no worker."""

    def test_false_cancels(self):
        calls = []

        def progress(stage, message, fraction):
            calls.append((stage, message, fraction))
            return False

        session = self.session(progress=progress)
        session.load_forward(LAYERNORM)
        with self.assertRaises(tad.CancelledError) as caught:
            session.generate(dims=SMALL)
        self.assertEqual(caught.exception.status_name, "TAD_ERR_CANCELLED")
        self.assertEqual(len(calls), 1)
        stage, message, fraction = calls[0]
        self.assertEqual(stage, "trace")
        self.assertIn("layernorm", message)
        self.assertIsInstance(fraction, float)
        self.assertEqual(session.snapshots(), [])

    def test_falsy_value_cancels(self):
        session = self.session(progress=lambda *a: 0)
        session.load_forward(LAYERNORM)
        with self.assertRaises(tad.CancelledError):
            session.generate(dims=SMALL)

    def test_exception_cancels_and_is_reraised(self):
        class Boom(Exception):
            pass

        def progress(stage, message, fraction):
            raise Boom(stage)

        session = self.session(progress=progress)
        session.load_forward(LAYERNORM)
        with self.assertRaises(Boom) as caught:
            session.generate(dims=SMALL)
        self.assertEqual(str(caught.exception), "trace")
        # The session is free again and as it was.
        self.assertEqual(session.snapshots(), [])
        with self.assertRaises(Boom):
            session.generate(dims=SMALL)

    def test_interrupt_cancels_and_is_reraised(self):
        def progress(stage, message, fraction):
            os.kill(os.getpid(), signal.SIGINT)  # as Ctrl-C during a long call

        session = self.session(progress=progress)
        session.load_forward(LAYERNORM)
        with self.assertRaises(KeyboardInterrupt):
            session.generate(dims=SMALL)
        self.assertEqual(session.snapshots(), [])

    def test_reentrant_call_from_the_callback_is_refused(self):
        holder = {}

        def progress(stage, message, fraction):
            holder["session"].snapshots()

        session = holder["session"] = self.session(progress=progress)
        self.addCleanup(holder.clear)  # break the session <-> callback cycle
        session.load_forward(LAYERNORM)
        with self.assertRaisesRegex(RuntimeError, "already in a call"):
            session.generate(dims=SMALL)


class Pipeline(TempDir):
    """Needs the compiler and a worker: this interpreter with torch (triton or tad's stand-in)."""

    def setUp(self):
        super().setUp()
        self.stages = []
        self.s = self.session(progress=lambda stage, message, fraction: self.stages.append(stage))
        self.s.load_forward(LAYERNORM)
        try:
            self.first = self.s.generate(dims=SMALL)
        except (tad.UnsupportedError, tad.WorkerError) as e:
            _support.skip(self, f"the pipeline cannot generate examples/layernorm.py here: {e}")

    def test_generate_makes_a_snapshot(self):
        self.assertRegex(self.first, r"^\d{4}-[0-9a-f]{8}$")
        self.assertEqual(self.stages[:1], ["trace"])
        self.assertIn("generate", self.stages)
        [entry] = self.s.snapshots()
        self.assertEqual((entry["id"], entry["kind"], entry["parent"]), (self.first, "generate", None))
        self.assertFalse(entry["has_verify"])
        source = self.s.candidate_source()
        self.assertEqual(source, self.s.candidate_source(self.first))
        # The generated module's contract: GRAD_INPUTS and forward(*args, **kwargs).
        tree = ast.parse(source, "generated.py")
        assigned = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                    for t in node.targets if isinstance(t, ast.Name)}
        self.assertEqual(ast.literal_eval(assigned["GRAD_INPUTS"]), ("x", "weight", "bias"))
        self.assertIn("forward", {node.name for node in tree.body
                                  if isinstance(node, ast.FunctionDef)})

    def test_snapshot_and_rollback(self):
        second = self.s.snapshot("mine")
        self.assertNotEqual(second, self.first)
        entries = self.s.snapshots()
        self.assertEqual([e["id"] for e in entries], [self.first, second])
        self.assertEqual(entries[1]["label"], "mine")
        self.assertEqual(entries[1]["kind"], "snapshot")
        self.assertEqual(entries[1]["parent"], self.first)
        self.s.rollback(self.first)
        self.assertEqual(self.s.candidate_source(), self.s.candidate_source(second))
        with self.assertRaises(tad.NotFoundError) as caught:
            self.s.rollback("9999-deadbeef")
        self.assertEqual(caught.exception.status, -9)
        self.assertIn("9999-deadbeef", str(caught.exception))

    def test_verify_on_cpu(self):
        report = self.s.verify(cpu=True, dims=SMALL, seed=3)
        self.assertIsInstance(report, dict)
        self.assertIs(report["passed"], True, report)
        self.assertTrue(self.s.snapshots()[0]["has_verify"])
        self.assertIn("verify", self.stages)

    def test_gpu_verify_and_bench(self):
        reason = _support.gpu_unavailable_reason()
        if reason is None:
            report = self.s.verify(dims=[SMALL], dtypes=["float32"])
            self.assertIs(report["passed"], True, report)
            bench = self.s.bench(dims=SMALL, dtypes="float32", reps=5)
            self.assertEqual(bench["kind"], "bench")
            self.assertTrue(bench["results"])
            return
        with self.assertRaises(tad.NoGPUError):
            self.s.bench(dims=SMALL, dtypes="float32", reps=5)
        _support.skip(self, f"GPU verify and bench not run ({reason}); checked NoGPUError instead")


if __name__ == "__main__":
    unittest.main()

"""The worker does not outlive the library: when the library's end of the request pipe closes while
user code runs, the worker kills its process group (itself and what user code started)."""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "..", "..", "src", "runtime", "python", "tad_worker.py")

LOOPING = """
import os, subprocess, time


def stub(x):
    return x


def make_args(dims):
    child = subprocess.Popen(["sleep", "300"])
    with open(dims["pids"] + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
    os.rename(dims["pids"] + ".tmp", dims["pids"])
    while True:
        time.sleep(0.05)
"""


def running(pid):
    """Not gone and not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return ") Z" not in f.read()
    except OSError:
        return False


def wait_for(path, seconds):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    return os.path.exists(path)


class WorkerLifetime(unittest.TestCase):
    def test_closing_the_request_pipe_kills_the_worker_group(self):
        with tempfile.TemporaryDirectory() as d:
            forward, pids = os.path.join(d, "looping.py"), os.path.join(d, "pids")
            with open(forward, "w") as f:
                f.write(LOOPING)
            worker = subprocess.Popen([sys.executable, WORKER, "--mode", "cpu"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      start_new_session=True)
            request = {"id": 1, "cmd": "trace", "file": forward, "stub": "stub", "dims": {"pids": pids}}
            worker.stdin.write((json.dumps(request) + "\n").encode())
            worker.stdin.flush()
            try:
                self.assertTrue(wait_for(pids, 120), "make_args never ran")
                with open(pids) as f:
                    grandchild = int(f.read().split()[1])
                self.assertTrue(running(grandchild))
                worker.stdin.close()
                self.assertEqual(worker.wait(timeout=2), -9)
                deadline = time.monotonic() + 2
                while running(grandchild) and time.monotonic() < deadline:
                    time.sleep(0.02)
                self.assertFalse(running(grandchild))
            finally:
                if worker.poll() is None:
                    os.killpg(worker.pid, 9)
                    worker.wait()


if __name__ == "__main__":
    unittest.main()

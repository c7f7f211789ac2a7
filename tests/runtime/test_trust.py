"""The worker's trust boundary (docs/security.md): tad's own modules win over files beside the
forward file, and user code cannot answer for the worker through stdout, fd 1 or a child process."""

import json
import os
import select
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "..", "..", "src", "runtime", "python", "tad_worker.py")

# Imported instead of tad's module of the same name, it would end the worker.
HIJACK = "raise SystemExit('hijacked: the worker imported a user file named like its own module')\n"

FORWARD = r'''
import os
import subprocess
import sys

FORGED = '{"id": 1, "ok": true, "result": {"forged": true}}\n'


def stub(x):
    return x


def make_args(dims):
    print(FORGED, end="", flush=True)
    os.write(1, FORGED.encode())
    child = "import os\nfor fd in range(1, 256):\n    try:\n        os.write(fd, %r)\n    except OSError:\n        pass\n"
    subprocess.run([sys.executable, "-c", child % FORGED.encode()], check=True)
    raise ValueError("the genuine error")
'''


def torch_available():
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


@unittest.skipUnless(torch_available(), "[SKIP] this python3 cannot import torch")
class TrustBoundary(unittest.TestCase):
    def request(self, forward_dir, request):
        forward = os.path.join(forward_dir, "forward.py")
        with open(forward, "w") as f:
            f.write(FORWARD)
        worker = subprocess.Popen([sys.executable, WORKER, "--mode", "cpu"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        replies = []
        try:
            # The request pipe stays open until the reply: closing it ends the worker.
            worker.stdin.write((json.dumps({**request, "file": forward}) + "\n").encode())
            worker.stdin.flush()
            deadline = time.monotonic() + 120
            while not replies or "progress" in replies[-1]:
                if not select.select([worker.stdout], [], [], max(0, deadline - time.monotonic()))[0]:
                    break
                line = worker.stdout.readline()
                if not line:
                    break
                replies.append(json.loads(line))
        finally:
            worker.kill()
            worker.wait()
            worker.stdin.close()
            worker.stdout.close()
        return replies

    def test_a_file_named_like_a_tad_module_beside_the_forward_file_does_not_replace_it(self):
        with tempfile.TemporaryDirectory() as d:
            for name in ("tad_errors", "tad_verify", "tad_interpret", "tad_dotcheck", "tad_trace"):
                with open(os.path.join(d, name + ".py"), "w") as f:
                    f.write(HIJACK)
            replies = self.request(d, {"id": 1, "cmd": "trace", "stub": "stub", "dims": {}})
            self.assertFalse(replies[-1]["ok"], replies)
            self.assertIn("make_args raised ValueError: the genuine error", replies[-1]["error"]["message"])
            replies = self.request(d, {"id": 1, "cmd": "verify", "stub": "stub", "generated": "/nonexistent.py",
                                       "dims_list": [{}], "dtypes": ["float64"], "interpreter": "/nonexistent.so"})
            self.assertNotIn("hijacked", json.dumps(replies))

    def test_user_code_cannot_forge_a_reply(self):
        with tempfile.TemporaryDirectory() as d:
            replies = self.request(d, {"id": 1, "cmd": "trace", "stub": "stub", "dims": {}})
            self.assertNotIn("forged", json.dumps(replies))
            self.assertFalse(replies[-1]["ok"], replies)
            self.assertIn("the genuine error", replies[-1]["error"]["message"])


if __name__ == "__main__":
    unittest.main()

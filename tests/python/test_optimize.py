"""Session.generate(backend='llm', ...) and Session.optimize_report: the binding passes the version 3
options through tad.h, against the scripted server of tests/common/fake_llm_server.py (no network)."""

import json
import os
import shutil
import subprocess
import sys
import time
import unittest

import _support
import tad
from test_session import TempDir

SERVER = os.path.join(_support.REPO, "tests", "common", "fake_llm_server.py")
KEY = "sk-test-python-0123456789"
SQUARE = os.path.join(_support.REPO, "tests", "optimize", "data", "square.py")


class FakeServer:
    def __init__(self, tmp, replies):
        script, self.port_file, self.log = (os.path.join(tmp, n) for n in ("script.json", "port", "log.jsonl"))
        with open(script, "w") as f:
            json.dump({"replies": replies}, f)
        self.proc = subprocess.Popen([sys.executable, SERVER, script, self.port_file, self.log])
        for _ in range(400):
            if os.path.exists(self.port_file):
                break
            time.sleep(0.05)
        with open(self.port_file) as f:
            self.url = f"http://127.0.0.1:{f.read().strip()}/v1"

    def requests(self):
        with open(self.log) as f:
            return [json.loads(line) for line in f if line.strip()]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class Optimize(TempDir):
    def setUp(self):
        super().setUp()
        self.forward = os.path.join(self.tmp, "square.py")
        shutil.copyfile(SQUARE, self.forward)
        os.environ["TAD_TEST_PY_KEY"] = KEY

    def test_options_are_checked_by_the_library(self):
        s = self.session()
        s.load_forward(self.forward)
        with self.assertRaises(tad.InvalidArgumentError) as e:
            s.generate(backend="llm", api_key_env="TAD_TEST_PY_KEY")
        self.assertEqual(str(e.exception), "tad_generate: no model given")
        with self.assertRaises(tad.InvalidArgumentError) as e:
            s.generate(backend="llm", model="m", api_key_env="TAD_TEST_PY_KEY", parallel=99)
        self.assertEqual(str(e.exception), "tad_generate: parallel must be from 1 to 16")
        with self.assertRaises(TypeError):
            s.generate("{}", None, "llm", None, "openai")  # the optimizer's options are keyword-only
        with self.assertRaises(tad.StateError):
            s.optimize_report()

    def test_one_round_through_the_binding(self):
        s = self.session()
        s.load_forward(self.forward)
        module = s.candidate_source(s.generate()).replace("    dx = t2 + t2\n", "    dx = 2.0 * t2\n")
        server = FakeServer(self.tmp, [{"text": f"```python\n{module}```\n", "usage": [300, 200]}])
        self.addCleanup(server.stop)
        best = s.generate(backend="llm", model="fake-model", base_url=server.url, api_key_env="TAD_TEST_PY_KEY",
                          max_iterations=1, temperature=0.3, reasoning_effort="low", max_tokens=10 ** 7)
        report = json.loads(s.optimize_report("json"))
        self.assertEqual(report["best"], best)
        self.assertEqual([c["verdict"] for c in report["candidates"]], ["baseline", "verified"])
        self.assertEqual((report["input_tokens"], report["output_tokens"]), (300, 200))
        self.assertIn("| verified |", s.optimize_report())
        body = server.requests()[0]["body"]
        self.assertEqual((body["model"], body["temperature"], body["reasoning_effort"]), ("fake-model", 0.3, "low"))


if __name__ == "__main__":
    unittest.main()

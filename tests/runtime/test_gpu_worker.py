"""The worker in gpu mode, spoken to over its protocol: real triton, CUDA. Skipped (with the
worker's own reason) where the worker cannot start in gpu mode."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "..", "..", "src", "runtime", "python", "tad_worker.py")
DATA = os.path.join(HERE, "data")


class WorkerClient:
    def __init__(self):
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, WORKER, "--mode", "gpu"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True)
        self.next_id = 0

    def request(self, cmd, **args):
        """(reply, progress messages)."""
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"id": self.next_id, "cmd": cmd, **args}) + "\n")
        self.proc.stdin.flush()
        progress = []
        for line in self.proc.stdout:
            message = json.loads(line)
            self.assert_id(message)
            if "progress" in message:
                progress.append(message["progress"]["message"])
            else:
                return message, progress
        raise AssertionError(f"worker exited during '{cmd}': {self.stderr()}")

    def result(self, cmd, **args):
        reply, _ = self.request(cmd, **args)
        if not reply["ok"]:
            raise AssertionError(f"'{cmd}' failed: {reply['error']}")
        return reply["result"]

    def assert_id(self, message):
        if message.get("id") != self.next_id:
            raise AssertionError(f"reply for another request: {message}")

    def stderr(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-4000:]

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.log):
            f.close()


def data(name):
    return os.path.join(DATA, name)


class GpuWorker(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.worker = WorkerClient()
        reply, _ = cls.worker.request("hello")
        if not reply["ok"]:
            cls.worker.close()
            raise unittest.SkipTest(f"[SKIP] no GPU worker: {reply['error']['message']}")
        cls.hello = reply["result"]

    @classmethod
    def tearDownClass(cls):
        cls.worker.close()

    def test_hello(self):
        self.assertEqual(self.hello["mode"], "gpu")
        self.assertNotEqual(self.hello["triton"], "stand-in")
        self.assertTrue(self.hello["device"])

    def test_trace_runs_and_records(self):
        rec = self.worker.result("trace", file=data("scale_add.py"), stub="scale_add",
                                 dims={"N": 300}, with_data=True)
        first, second = rec["launches"]
        self.assertEqual((first["kernel"], first["grid"]), ("_scale_add_kernel", [3, 1, 1]))
        refs = {a["name"]: a.get("ref") for a in first["args"]}
        self.assertEqual(refs["X"], {"input": 0})
        self.assertEqual(refs["Out"], {"output": 0})
        self.assertEqual(refs["Partial"], {"temp": 0})
        self.assertEqual({a["name"]: a.get("ref") for a in second["args"]}["Partial"], {"temp": 0})
        self.assertIn("input:0", rec["data"])

    def test_trace_autotuned_kernel_calling_a_helper(self):
        rec = self.worker.result("trace", file=data("gpu_kernels.py"), stub="square",
                                 dims={"N": 1000})
        launch = rec["launches"][0]
        values = {a["name"]: a.get("value") for a in launch["args"]}
        self.assertIn(values["BLOCK"], (64, 128))
        self.assertEqual(launch["options"]["num_warps"], 2 if values["BLOCK"] == 64 else 4)
        self.assertEqual(values["EVEN"], 1000 % values["BLOCK"] == 0)
        self.assertEqual(launch["grid"], [-(-1000 // values["BLOCK"]), 1, 1])

    def test_verify_with_reference(self):
        result = self.worker.result("verify", file=data("scale_add.py"), stub="scale_add",
                                    generated=data("scale_add_generated.py"),
                                    dims_list=[{"N": 300}, {"N": 4096}],
                                    dtypes=["float32", "float16"], seed=0)
        self.assertEqual([e["status"] for e in result["results"]], ["pass"] * 4,
                         json.dumps(result, indent=1))

    def test_verify_finds_a_wrong_gradient(self):
        result = self.worker.result("verify", file=data("scale_add.py"), stub="scale_add",
                                    generated=data("scale_add_wrong.py"), dims_list=[{"N": 300}],
                                    dtypes=["float32"], seed=0)
        entry = result["results"][0]
        self.assertEqual(entry["status"], "fail")
        self.assertEqual([g["ok"] for g in entry["grads"]], [False, True])

    def test_verify_with_finite_differences(self):
        result = self.worker.result("verify", file=data("scale_add_noref.py"), stub="scale_add",
                                    generated=data("scale_add_generated.py"),
                                    dims_list=[{"N": 300}], dtypes=["float32", "float64"], seed=0)
        self.assertEqual([e["reference"] for e in result["results"]], ["finite differences"] * 2)
        self.assertEqual([e["status"] for e in result["results"]], ["pass", "pass"],
                         json.dumps(result, indent=1))

    def test_bench(self):
        reply, progress = self.worker.request(
            "bench", file=data("scale_add.py"), stub="scale_add",
            generated=data("scale_add_generated.py"), dims_list=[{"N": 1 << 20}],
            dtypes=["float32"], reps=20)
        self.assertTrue(reply["ok"], reply.get("error"))
        entry = reply["result"]["results"][0]
        self.assertEqual(entry["status"], "ok", entry)
        for key in ("fwd_ms", "bwd_ms", "ref_bwd_ms"):
            self.assertGreater(entry[key], 0)
        self.assertEqual(progress, ["bench 1/1: {'N': 1048576} float32"])
        print(f"\nbench scale_add N=2^20: {entry}", file=sys.stderr)

    def test_oom_is_its_own_kind(self):
        reply, _ = self.worker.request("trace", file=data("gpu_kernels.py"), stub="square",
                                       dims={"N": 8, "case": "oom"})
        self.assertFalse(reply["ok"])
        self.assertEqual(reply["error"]["kind"], "oom")
        self.assertIn("OutOfMemoryError", reply["error"]["message"])


class GpuWorkerFault(unittest.TestCase):
    def test_a_faulting_kernel_asks_for_a_restart(self):
        worker = WorkerClient()
        try:
            reply, _ = worker.request("hello")
            if not reply["ok"]:
                self.skipTest(f"[SKIP] no GPU worker: {reply['error']['message']}")
            reply, _ = worker.request("trace", file=data("gpu_kernels.py"), stub="fault",
                                      dims={"N": 8})
            self.assertFalse(reply["ok"])
            self.assertEqual(reply["error"]["kind"], "launch", reply["error"])
            self.assertTrue(reply.get("restart"))
            self.assertEqual(worker.proc.wait(timeout=30), 0)
        finally:
            worker.close()


if __name__ == "__main__":
    unittest.main()

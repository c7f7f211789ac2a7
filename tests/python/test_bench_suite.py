"""bench/suite.py end to end on CPU torch (tests/python/bench_suite_cpu.py): tad generates the
modules, the suite checks every variant's gradients and writes its records, table and plot.
A module with a wrong backward is reported as failing its check. Skips without torch or without
the tad program ($TAD_BIN)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TAD = os.environ.get("TAD_BIN", "")

try:
    import torch  # noqa: F401
except ImportError:
    torch = None

WRONG = '''import torch
GRAD_INPUTS = ("x", "weight", "bias")


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y):
        return y.clone()

    @staticmethod
    def backward(ctx, g):
        return 2 * g


def forward(x, weight, bias, eps=1e-5):
    return Twice.apply(torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps))
'''


@unittest.skipIf(torch is None or not os.path.exists(TAD), "[SKIP] needs torch and $TAD_BIN")
class SuiteOnCpu(unittest.TestCase):
    def generate(self, tmp, relative):
        module = os.path.join(tmp, os.path.basename(relative))
        env = dict(os.environ, TAD_PYTHON=sys.executable)
        subprocess.run([TAD, "generate", os.path.join(ROOT, relative), "-o", module, "-q"],
                       check=True, cwd=tmp, env=env, stdin=subprocess.DEVNULL)
        return module

    def test_cases(self):
        with tempfile.TemporaryDirectory() as tmp:
            layernorm = self.generate(tmp, "examples/layernorm.py")
            attention = self.generate(tmp, "dataset/flash_attention.py")
            wrong = os.path.join(tmp, "wrong.py")
            with open(wrong, "w") as f:
                f.write(WRONG)
            out = os.path.join(tmp, "out")
            cases = [
                ["examples/layernorm.py", "layernorm", '{"M": 37, "N": 100}', "float32", layernorm],
                ["dataset/flash_attention.py", "flash_attention",
                 '{"B": 1, "H": 2, "N": 80, "D": 16, "causal": true}', "float32", attention],
                ["examples/layernorm.py", "layernorm", '{"M": 8, "N": 16}', "float32", wrong],
            ]
            args = [sys.executable, os.path.join(HERE, "bench_suite_cpu.py"), "--out", out]
            for case in cases:
                args += ["--case", os.path.join(ROOT, case[0])] + case[1:]
            run = subprocess.run(args, capture_output=True, text=True, cwd=tmp)
            self.assertEqual(run.returncode, 0, run.stderr[-3000:])
            with open(os.path.join(out, "results.jsonl")) as f:
                records = [json.loads(line) for line in f]
            with open(os.path.join(out, "table.md")) as f:
                table = f.read()
            self.assertTrue(os.path.getsize(os.path.join(out, "ratio.png")) > 0)
        self.assertEqual([r["kernel"] for r in records],
                         ["layernorm", "flash_attention", "layernorm"])
        for record in records[:2]:
            for name in ("generated", "hand-written", "eager"):
                self.assertEqual(record["variants"][name].get("check"), "ok",
                                 (record["kernel"], name, record["variants"][name]))
                self.assertEqual(record["variants"][name]["ms"] is None, False)
            self.assertGreater(record["bytes"], 0)
        self.assertTrue(records[2]["variants"]["generated"]["check"].startswith("FAIL (x:"))
        self.assertEqual(records[2]["variants"]["hand-written"]["check"], "ok")
        # Flash attention's backward flops come from the file: 2.5x the forward's, halved causal.
        self.assertEqual(records[1]["flops"], 4 * 2 * 80 * 80 * 16 // 2 * 5 // 2)
        self.assertEqual(len(table.strip().splitlines()), 2 + len(cases))


if __name__ == "__main__":
    unittest.main()

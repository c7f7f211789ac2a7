"""Session.retrieve and tad.dataset_list: retrieval through the Python binding (docs/retrieval.md)."""

import os
import shutil
import sys
import tempfile
import unittest

import _support
import tad

LAYERNORM = os.path.join(_support.EXAMPLES, "layernorm.py")
DATASET = os.path.join(_support.REPO, "dataset")


class Retrieve(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tad-py-retrieve-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.cache = os.path.join(self.tmp, "cache")
        self.session = tad.Session(work_dir=os.path.join(self.tmp, "work"), python=sys.executable)
        self.addCleanup(self.session.close)

    def test_layernorm_finds_the_norms(self):
        self.session.load_forward(LAYERNORM)
        report = self.session.retrieve(dataset=DATASET, cache=self.cache)
        self.assertEqual(report["kind"], "retrieve")
        families = [r["family"] for r in report["results"]]
        self.assertEqual(len(families), 4)
        self.assertEqual(families[:3], ["norm"] * 3, report["results"])
        first = report["results"][0]
        self.assertGreater(first["similarity"], 0.5)
        self.assertEqual(set(first["why"]["groups"]), {"ir", "ast", "ident", "count"})
        self.assertTrue(first["why"]["matched"])

    def test_exclude_topk_and_min_sim(self):
        self.session.load_forward(LAYERNORM)
        names = [r["name"] for r in self.session.retrieve(topk=10, exclude=["norm", "softmax"], dataset=DATASET,
                                                          cache=self.cache)["results"]]
        self.assertEqual(len(names), 10)
        self.assertFalse([n for n in names if "norm" in n or "softmax" in n], names)
        one = self.session.retrieve(topk=1, exclude="layernorm", dataset=DATASET, cache=self.cache)
        self.assertEqual(len(one["results"]), 1)
        self.assertNotIn("layernorm", one["results"][0]["path"])
        self.assertEqual(self.session.retrieve(min_sim=0.999, dataset=DATASET, cache=self.cache)["results"], [])

    def test_errors(self):
        with self.assertRaises(tad.StateError) as e:
            self.session.retrieve(dataset=DATASET, cache=self.cache)
        self.assertEqual(str(e.exception), "tad_retrieve: no forward file loaded (call tad_load_forward first)")
        self.session.load_forward(LAYERNORM)
        with self.assertRaises(tad.InvalidArgumentError) as e:
            self.session.retrieve(topk=-2, dataset=DATASET, cache=self.cache)
        self.assertEqual(str(e.exception), "tad_retrieve: topk must not be negative")
        missing = os.path.join(self.tmp, "none")
        with self.assertRaises(tad.FileError) as e:
            self.session.retrieve(dataset=missing)
        self.assertEqual(str(e.exception), f"{missing}: dataset directory not found")
        with self.assertRaises(TypeError):
            self.session.retrieve(exclude=[3])

    def test_dataset_list(self):
        listing = tad.dataset_list(dataset=DATASET, cache=self.cache)
        names = sorted(e["name"] for e in listing["entries"])
        self.assertEqual(names, sorted(f[:-3] for f in os.listdir(DATASET) if f.endswith(".py")))
        rms = next(e for e in listing["entries"] if e["name"] == "rmsnorm")
        self.assertEqual(rms["family"], "norm")
        self.assertEqual(rms["backward"]["kind"], "hand-written")
        self.assertEqual(rms["backward"]["path"], os.path.join(_support.REPO, "bench", "refs", "rmsnorm.py"))
        self.assertEqual(rms["features"]["counts"]["reductions"], 1)


class Sidecars(unittest.TestCase):
    """dataset/meta/<name>.json names the hand-written backward bench/suite.py uses for that file
    (bench/refs BY_FILE), and only that one."""

    def test_hand_written_backwards_are_the_bench_references(self):
        import json
        sys.path.insert(0, os.path.join(_support.REPO, "bench"))
        import refs
        for name in sorted(f[:-3] for f in os.listdir(DATASET) if f.endswith(".py")):
            with open(os.path.join(DATASET, "meta", name + ".json"), encoding="utf-8") as f:
                meta = json.load(f)
            expected = refs.BY_FILE.get(name)
            if expected is None:
                self.assertNotIn("backward", meta, name)
                continue
            self.assertEqual(meta["backward"], f"../bench/refs/{expected}.py", name)
            self.assertEqual(meta["backward_kind"], "hand-written", name)
            self.assertTrue(os.path.exists(os.path.join(DATASET, meta["backward"])), name)


if __name__ == "__main__":
    unittest.main()

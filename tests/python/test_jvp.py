"""The forward mode tad emits (`jvp` in the generated module), run against the recording stand-in for
triton: which kernel the launcher starts with which arguments, and the tangent buffers it allocates.
No numbers: the stand-in runs no kernel (tests/pipeline checks the tangent kernels' values on the
CPU interpreter, the GPU tier with real triton)."""

import os
import shutil
import sys
import tempfile
import unittest

import _support
import torch

import tad

PIPELINE_DATA = os.path.join(_support.REPO, "tests", "pipeline", "data")


class EmittedJvp(unittest.TestCase):
    def setUp(self):
        if not _support.STANDIN_TRITON:
            _support.skip(self, "these tests record launches through tad's stand-in for triton")
        self.tmp = tempfile.mkdtemp(prefix="tad-py-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        # Launches are recorded, not run: (kernel name, grid, {parameter: value}, options).
        self.launches = []
        kernel_class = sys.modules["triton"].JITFunction
        saved = kernel_class.__getitem__

        def record(kernel, grid):
            def launch(*args, **kwargs):
                named = dict(zip(kernel.arg_names, args))
                options = {k: v for k, v in kwargs.items() if k not in kernel.arg_names}
                named.update({k: v for k, v in kwargs.items() if k in kernel.arg_names})
                self.launches.append((kernel.__name__, grid, named, options))
            return launch

        kernel_class.__getitem__ = record
        self.addCleanup(setattr, kernel_class, "__getitem__", saved)

    def generated(self, path, dims):
        session = tad.Session(work_dir=os.path.join(self.tmp, "work"), python=sys.executable)
        self.addCleanup(session.close)
        session.load_forward(path)
        try:
            session.generate(dims=dims)
        except (tad.UnsupportedError, tad.WorkerError) as e:
            _support.skip(self, f"the pipeline cannot generate {path} here: {e}")
        out = os.path.join(self.tmp, os.path.basename(path).replace(".py", "_generated.py"))
        with open(out, "w") as f:
            f.write(session.candidate_source())
        return _support.import_file(out)

    def test_gelu_launches_its_tangent_kernel_with_the_recorded_launch(self):
        m = self.generated(os.path.join(_support.EXAMPLES, "gelu.py"), {"n": 1000})
        self.assertIsNone(m.JVP_UNSUPPORTED)
        x, v = torch.randn(1000), torch.randn(1000)
        out, tangent = m.jvp(x, tangents={"x": v})
        (fwd, _, _, _), (name, grid, args, options) = self.launches
        self.assertEqual((fwd, name, grid, options), ("_gelu_fwd", "_gelu_fwd_jvp", (1,), {}))
        self.assertEqual(sorted(args), ["BLOCK_SIZE", "DX", "DY", "X", "n"])
        self.assertIs(args["X"], x)
        self.assertIs(args["DX"], v)  # already laid out like x: passed as it is
        self.assertIs(args["DY"], tangent)
        self.assertEqual((args["n"], args["BLOCK_SIZE"]), (1000, 1024))
        self.assertEqual((tangent.shape, tangent.stride(), tangent.dtype), (out.shape, out.stride(), out.dtype))
        self.assertEqual(tangent.abs().sum().item(), 0.0)  # zeros until the kernel writes them
        # The tangents may be a tensor or a sequence too; None is a zero tangent.
        for tangents in (v, [v], (None,)):
            m.jvp(x, tangents=tangents)
            expected = torch.zeros(1000) if tangents[0] is None else v
            self.assertTrue(torch.equal(self.launches[-1][2]["DX"], expected))

    def test_layernorm_tangents_take_the_inputs_layouts(self):
        m = self.generated(os.path.join(_support.EXAMPLES, "layernorm.py"), {"M": 4, "N": 48})
        x, weight, bias = torch.randn(4, 48), torch.randn(48), torch.randn(48)
        dx = torch.randn(48, 4).t()  # x's values in a transposed layout
        out, tangent = m.jvp(x, weight, bias, 1e-5, tangents={"x": dx, "bias": torch.ones(48)})
        name, grid, args, options = self.launches[-1]
        self.assertEqual((name, grid, options), ("_layernorm_fwd_jvp", (4,), {"num_warps": 1}))
        self.assertEqual(args["DX"].stride(), x.stride())
        self.assertTrue(torch.equal(args["DX"], dx))
        self.assertTrue(torch.equal(args["DW"], torch.zeros(48)))  # left out: zero
        self.assertTrue(torch.equal(args["DB"], torch.ones(48)))
        self.assertIs(args["DY"], tangent)
        self.assertEqual((args["stride"], args["N"], args["eps"], args["BLOCK_SIZE"]), (48, 48, 1e-5, 64))
        self.assertNotIn("Mean", args)  # saved statistics get no tangent
        self.assertEqual((tangent.shape, tangent.stride()), (out.shape, out.stride()))

    def test_bad_tangents_are_rejected(self):
        m = self.generated(os.path.join(_support.EXAMPLES, "layernorm.py"), {"M": 4, "N": 48})
        x, weight, bias = torch.randn(4, 48), torch.randn(48), torch.randn(48)
        with self.assertRaisesRegex(TypeError, r"tangents for \['eps'\], which are not GRAD_INPUTS"):
            m.jvp(x, weight, bias, tangents={"eps": torch.ones(1)})
        with self.assertRaisesRegex(TypeError, r"2 tangents for 3 GRAD_INPUTS"):
            m.jvp(x, weight, bias, tangents=[None, None])
        with self.assertRaisesRegex(ValueError, r"a tangent of shape \[4\] for an input of shape \[48\]"):
            m.jvp(x, weight, bias, tangents={"bias": torch.ones(4)})

    def test_in_place_updates_read_saved_copies_and_update_a_copy_of_the_tangent(self):
        # gate_ updates z in place (launch 4) and bias_silu_ updates y (launch 1): their tangent
        # kernels read the contents from before those launches, and z's tangent buffer is a copy of
        # the caller's, which the tangent kernel updates in place and jvp returns for output 1.
        m = self.generated(os.path.join(PIPELINE_DATA, "inplace_chain.py"), {"n": 100})
        self.assertIsNone(m.JVP_UNSUPPORTED)
        self.assertEqual(m._JVP_SNAPSHOTS, {1: ((1, "Y"),), 4: ((4, "Z_IN"),)})
        x, w, b, z = torch.randn(100), torch.randn(4), torch.randn(4), torch.randn(100)
        vz = torch.randn(100)
        out, (ty, tz) = m.jvp(x, w, b, z, tangents={"z": vz})
        self.assertIs(out[1], z)
        launches = {name: (grid, args) for name, grid, args, _ in self.launches}
        _, gate = launches["gate__jvp"]
        self.assertIsNot(gate["Z_IN"], z)
        self.assertIsNot(gate["DZ_IN"], vz)
        self.assertTrue(torch.equal(gate["DZ_IN"], vz))
        self.assertIs(gate["DZ_IN"], gate["DZ_OUT"])
        self.assertIs(tz, gate["DZ_OUT"])
        _, silu = launches["bias_silu__jvp"]
        self.assertIs(silu["DY"], ty)
        self.assertIsNot(silu["Y"], out[0])

    def test_generated_kernels_are_wrapped_in_fit_shared_memory(self):
        # A launch whose pipeline does not fit is retried with fewer stages (test_templates tests
        # _fit_shared_memory itself).
        m = self.generated(os.path.join(_support.EXAMPLES, "gelu.py"), {"n": 1000})
        self.assertIsInstance(m._gelu_fwd_bwd, m._fit_shared_memory)
        self.assertIsInstance(m._gelu_fwd_jvp, m._fit_shared_memory)


if __name__ == "__main__":
    unittest.main()

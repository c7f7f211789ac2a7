"""tad_trace with the CPU stand-in for triton. Run: /usr/bin/python3 -m unittest discover -s tests/runtime"""

import base64
import os
import struct
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(HERE, "..", "..", "src", "runtime", "python")
sys.path[:0] = [os.path.join(PYDIR, "standin"), PYDIR]

import torch  # noqa: E402
import triton  # noqa: E402

import tad_trace  # noqa: E402
import tad_userfile  # noqa: E402

PRELUDE = "import torch\nimport triton\nimport triton.language as tl\n"


def module_from(source, name="user_module"):
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    exec(PRELUDE + source, module.__dict__)
    return module


def trace(module, stub, *args, **kwargs):
    return tad_trace.trace_call(module, getattr(module, stub), args, kwargs)


class StandIn(unittest.TestCase):
    def test_is_the_stand_in(self):
        self.assertTrue(triton.TAD_STANDIN)
        self.assertEqual(triton.cdiv(300, 128), 3)
        self.assertEqual(triton.next_power_of_2(33), 64)
        self.assertEqual(triton.next_power_of_2(1), 1)

    def test_language_names_are_inert(self):
        m = module_from("from triton.language.extra import libdevice\n"
                        "from triton.language.extra.cuda import libdevice as cuda_libdevice\n"
                        "DT = tl.float16\nC = tl.constexpr(8)\nF = tl.math.exp\n")
        self.assertEqual(m.C.value, 8)
        self.assertEqual(repr(m.DT), "triton.language.float16")
        self.assertIsNotNone(m.libdevice.fast_expf)

    def test_launch_outside_tracing_is_a_clear_error(self):
        m = module_from("@triton.jit\ndef k(X):\n    pass\n")
        with self.assertRaisesRegex(RuntimeError, "'k' was launched outside tad tracing"):
            m.k[(1,)](torch.zeros(1))


class TraceScaleAdd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.module = tad_userfile.load_module(os.path.join(HERE, "data", "scale_add.py"))
        args, kwargs = tad_userfile.make_args(cls.module, {"N": 300, "dtype": "float32",
                                                           "device": "cpu"})
        cls.x = args[0]
        cls.outputs, cls.record = tad_trace.trace_call(cls.module, cls.module.scale_add, args,
                                                       kwargs, with_data=True)

    def test_inputs_are_the_stub_parameters_in_order(self):
        inputs = self.record["inputs"]
        self.assertEqual([i["name"] for i in inputs], ["x", "y", "alpha"])
        self.assertEqual(inputs[0], {"name": "x", "index": 0, "kind": "tensor", "dtype": "float32",
                                     "shape": [300], "stride": [1], "requires_grad": False})
        self.assertEqual(inputs[2], {"name": "alpha", "index": 2, "kind": "float", "value": 0.5})

    def test_outputs_and_temps(self):
        self.assertEqual(self.record["outputs"],
                         [{"index": 0, "kind": "tensor", "dtype": "float32", "shape": [300],
                           "stride": [1]},
                          {"index": 1, "kind": "tensor", "dtype": "float32", "shape": [],
                           "stride": []}])
        self.assertEqual(self.record["temps"],
                         [{"id": 0, "dtype": "float32", "shape": [3], "stride": [1]}])

    def test_first_launch(self):
        launch = self.record["launches"][0]
        self.assertEqual(launch["kernel"], "_scale_add_kernel")
        self.assertEqual(launch["grid"], [3, 1, 1])
        self.assertEqual(launch["options"], {"num_warps": 4})
        args = {a["name"]: a for a in launch["args"]}
        self.assertEqual([a["name"] for a in launch["args"]],
                         ["X", "Y", "Out", "Partial", "n", "alpha", "BLOCK"])
        self.assertEqual(args["X"], {"name": "X", "kind": "tensor", "ref": {"input": 0},
                                     "offset": 0, "dtype": "float32"})
        self.assertEqual(args["Out"]["ref"], {"output": 0})
        self.assertEqual(args["Partial"]["ref"], {"temp": 0})
        self.assertEqual(args["n"], {"name": "n", "kind": "int", "value": 300})
        self.assertEqual(args["BLOCK"]["value"], 128)

    def test_second_launch_shares_the_temp_and_binds_defaults(self):
        launch = self.record["launches"][1]
        self.assertEqual(launch["kernel"], "_sum_kernel")
        self.assertEqual(launch["grid"], [1, 1, 1])
        self.assertEqual(launch["options"], {})
        args = {a["name"]: a for a in launch["args"]}
        self.assertEqual(args["Partial"]["ref"], {"temp": 0})
        self.assertEqual(args["Total"]["ref"], {"output": 1})
        self.assertEqual(args["BLOCK"]["value"], 4)

    def test_data_is_float64_little_endian(self):
        raw = base64.b64decode(self.record["data"]["input:0"])
        values = struct.unpack("<300d", raw)
        self.assertEqual(list(values), self.x.double().tolist())
        # Outputs and temps as the first launch getting them saw them (here torch.empty's garbage;
        # the CPU tier uses it only when that launch reads them).
        self.assertEqual(set(self.record["data"]), {"input:0", "input:1", "output:0", "output:1", "temp:0"})
        self.assertEqual(len(base64.b64decode(self.record["data"]["temp:0"])), 8 * 3)

    def test_module_kernels_are_untouched_afterwards(self):
        self.assertNotIn("__getitem__", type(self.module._sum_kernel).__dict__)
        with self.assertRaisesRegex(RuntimeError, "outside tad tracing"):
            self.module._sum_kernel[(1,)]()


VIEWS = """
@triton.jit
def k(A, B, C, n, BLOCK: tl.constexpr):
    pass

def stub(x, lo=-float("inf")):
    buf = torch.empty(64)
    k[(1,)](x[2:], buf[8:], buf, lo, BLOCK=16)
    k[(2,)](x.t(), buf, x, 0, BLOCK=16)
    return x
"""


class TraceMemory(unittest.TestCase):
    def test_views_resolve_to_their_tensor_with_an_offset(self):
        m = module_from(VIEWS)
        x = torch.zeros(4, 4)
        _, record = trace(m, "stub", x)
        first, second = ([a for a in launch["args"] if a["kind"] == "tensor"]
                         for launch in record["launches"])
        self.assertEqual((first[0]["ref"], first[0]["offset"]), ({"input": 0}, 8))
        self.assertEqual((first[1]["ref"], first[1]["offset"]), ({"temp": 0}, 8))
        self.assertEqual((first[2]["ref"], first[2]["offset"]), ({"temp": 0}, 0))
        self.assertEqual(second[0]["ref"], {"input": 0})
        self.assertEqual(second[2]["ref"], {"input": 0})  # the output is the input: inputs win
        self.assertEqual(record["temps"], [{"id": 0, "dtype": "float32", "shape": [64],
                                            "stride": [1]}])
        self.assertEqual(record["inputs"][1], {"name": "lo", "index": 1, "kind": "float",
                                               "value": "-inf"})


AUTOTUNED = """
@triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=2),
                          triton.Config({"BLOCK": 64}, num_warps=8)], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def k(X, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pass

@triton.jit(do_not_specialize=["n"])
def plain(X, n, BLOCK: tl.constexpr):
    pass

def stub(x):
    k[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]), 2)](x, x.numel())
    plain[(1,)](x, x.numel(), BLOCK=16)
    return x
"""


class TraceWrappers(unittest.TestCase):
    def setUp(self):
        self.m = module_from(AUTOTUNED)

    def test_autotune_uses_the_first_config_and_heuristics_see_it(self):
        _, record = trace(self.m, "stub", torch.zeros(96))
        launch = record["launches"][0]
        self.assertEqual(launch["kernel"], "k")
        self.assertEqual(launch["grid"], [3, 2, 1])
        self.assertEqual(launch["options"], {"num_warps": 2, "num_ctas": 1, "num_stages": 3})
        self.assertEqual([(a["name"], a.get("value")) for a in launch["args"]],
                         [("X", None), ("n", 96), ("BLOCK", 32), ("EVEN", True)])
        self.assertEqual(record["launches"][1]["kernel"], "plain")

    def test_kernel_names_limit_recording(self):
        with self.assertRaisesRegex(RuntimeError, "'plain' was launched outside tad tracing"):
            tad_trace.trace_call(self.m, self.m.stub, (torch.zeros(8),), {}, kernel_names=["k"])

    def test_patches_are_undone_when_the_stub_raises(self):
        self.m.k.fn = None  # breaks describing the launch
        with self.assertRaises(Exception):
            trace(self.m, "stub", torch.zeros(8))
        for cls in (triton.Autotuner, triton.JITFunction):
            self.assertNotIn("__getitem__", cls.__dict__)


class TraceInPlace(unittest.TestCase):
    def test_an_output_that_is_an_input_names_it(self):
        m = module_from("@triton.jit\ndef k(X, n):\n    pass\n"
                        "def f(x, y):\n    k[(1,)](x, x.numel())\n    return y, x, x.view(-1)\n")
        x, y = torch.zeros(2, 3), torch.ones(3)
        _, record = tad_trace.trace_call(m, m.f, (x, y), {}, with_data=True)
        self.assertEqual([o.get("input") for o in record["outputs"]], [1, 0, None])
        # Its contents before the call are the input's data.
        self.assertEqual(sorted(record["data"]), ["input:0", "input:1"])


class TraceErrors(unittest.TestCase):
    def test_no_launch(self):
        m = module_from("def copy(x):\n    return x.clone()\n")
        with self.assertRaises(tad_trace.TadError) as cm:
            trace(m, "copy", torch.zeros(2))
        self.assertEqual(cm.exception.kind, "no_launch")
        self.assertEqual(str(cm.exception), "stub 'copy' launched no @triton.jit kernel")

    def test_missing_kernel_argument_is_a_launch_error(self):
        m = module_from("@triton.jit\ndef k(X, n):\n    pass\n"
                        "def stub(x):\n    k[(1,)](x)\n    return x\n")
        with self.assertRaises(tad_trace.TadError) as cm:
            trace(m, "stub", torch.zeros(2))
        self.assertEqual(cm.exception.kind, "launch")
        self.assertIn("kernel 'k': missing a required argument: 'n'", str(cm.exception))

    def test_find_stub_unwraps_the_decorator(self):
        tad_userfile.install_tad_shim()
        m = module_from("import tad\n@tad.autodiff(grad_inputs=['x'])\ndef f(x):\n    return x\n"
                        "@tad.autodiff\ndef g(x):\n    return x\n"
                        "wrapped = lambda x: x\nwrapped.__tad_stub__ = f\nnot_fn = 3\n")
        self.assertIs(tad_trace.find_stub(m, "f"), m.f)
        self.assertIs(tad_trace.find_stub(m, "g"), m.g)
        self.assertIs(tad_trace.find_stub(m, "wrapped"), m.f)
        for name, message in (("absent", "<user_module> has no function 'absent'"),
                              ("not_fn", "'not_fn' in <user_module> is not a function")):
            with self.assertRaises(tad_trace.TadError) as cm:
                tad_trace.find_stub(m, name)
            self.assertEqual((cm.exception.kind, str(cm.exception)), ("no_stub", message))


if __name__ == "__main__":
    unittest.main()


class TraceTorchCode(unittest.TestCase):
    """With grad_inputs the record marks what the stub's torch code computed from them."""

    SOURCE = ("@triton.jit\ndef k(X, Y, n, B: tl.constexpr):\n    pass\n\n"
              "def summed(x):\n    y = torch.empty_like(x)\n    k[(1,)](x, y, x.numel(), B=16)\n    return y.sum(0)\n\n"
              "def sorted_in(x):\n    xs, _ = torch.sort(x, dim=-1)\n    y = torch.empty_like(x)\n"
              "    k[(1,)](xs, y, x.numel(), B=16)\n    return y\n\n"
              "def views(x, w):\n    y = torch.empty_like(x)\n    idx = torch.arange(4) * 2\n"
              "    k[(1,)](x.reshape(-1), y.view(-1), x.numel(), B=16)\n    k[(1,)](w * 2, idx, 4, B=16)\n    return y\n")

    def setUp(self):
        self.module = module_from(self.SOURCE)
        self.x = torch.randn(4, 8)

    def traced(self, stub, *args):
        _, record = tad_trace.trace_call(self.module, getattr(self.module, stub), args, {}, grad_inputs=("x",))
        return record

    def test_an_output_torch_reduced_is_marked_with_its_op(self):
        record = self.traced("summed", self.x)
        self.assertEqual(record["outputs"][0]["torch"], "SumBackward1")

    def test_a_kernel_argument_torch_computed_is_marked(self):
        args = self.traced("sorted_in", self.x)["launches"][0]["args"]
        self.assertEqual({a["name"]: a.get("torch") for a in args}, {"X": "SortBackward0", "Y": None, "n": None, "B": None})

    def test_views_and_values_of_no_grad_input_are_not_marked(self):
        record = self.traced("views", self.x, torch.randn(4))
        self.assertNotIn("torch", record["outputs"][0])
        for launch in record["launches"]:
            self.assertEqual([a["name"] for a in launch["args"] if "torch" in a], [])

    def test_each_tensor_argument_says_whether_it_requires_grad_when_launched_and_its_view(self):
        record = self.traced("views", self.x, torch.randn(4))
        first, second = ({a["name"]: a for a in launch["args"]} for launch in record["launches"])
        self.assertEqual((first["X"]["requires_grad"], first["Y"]["requires_grad"]), (True, False))
        self.assertEqual((first["X"]["view_shape"], first["X"]["view_stride"]), ([32], [1]))
        # w is no grad input; the index table needs none.
        self.assertEqual((second["X"]["requires_grad"], second["Y"]["requires_grad"]), (False, False))
        self.assertNotIn("requires_grad", first["n"])

    def test_a_tensor_a_launch_wrote_from_a_grad_input_requires_grad_at_the_next(self):
        source = ("@triton.jit\ndef k(X, Y, n, B: tl.constexpr):\n    pass\n\n"
                  "def twice(x):\n    y = torch.empty_like(x)\n    z = torch.empty_like(x)\n"
                  "    k[(1,)](x, y, x.numel(), B=16)\n    k[(1,)](y, z, x.numel(), B=16)\n    return z.sum()\n")
        module = module_from(source)
        _, record = tad_trace.trace_call(module, module.twice, (self.x,), {}, grad_inputs=("x",))
        self.assertEqual([{a["name"]: a.get("requires_grad") for a in l["args"] if a["kind"] == "tensor"}
                          for l in record["launches"]], [{"X": True, "Y": False}, {"X": True, "Y": False}])

    def test_without_grad_inputs_no_autograd_fields(self):
        _, record = tad_trace.trace_call(self.module, self.module.summed, (self.x,), {})
        self.assertNotIn("requires_grad", record["launches"][0]["args"][0])

    def test_the_callers_tensors_are_left_alone(self):
        before = self.x.clone()
        self.traced("summed", self.x)
        self.assertTrue(torch.equal(self.x, before))
        self.assertFalse(self.x.requires_grad)
        self.assertIsNone(self.x.grad_fn)

    def test_without_grad_inputs_nothing_is_marked(self):
        _, record = tad_trace.trace_call(self.module, self.module.summed, (self.x,), {})
        self.assertNotIn("torch", record["outputs"][0])

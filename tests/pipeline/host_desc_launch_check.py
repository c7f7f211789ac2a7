"""Checks a generated module (argv[1]) of tests/pipeline/data/matmul_host_desc.py without a GPU: the
launch recorder expands each host-side TensorDescriptor argument into its base tensor and scalars,
and the launcher passes the backward kernel exactly the parameters it declares, from them."""
import importlib.util
import inspect
import sys

import torch

spec = importlib.util.spec_from_file_location("generated", sys.argv[1])
generated = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generated)


class Fake:
    """A kernel that records its launches instead of running."""

    def __init__(self, fn):
        self.fn = fn
        self.calls = []

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.calls.append((grid, args, kwargs))


generated._matmul_hd_fwd.kernel = Fake(generated._matmul_hd_fwd.kernel.fn)
backward_kernel = generated._matmul_hd_fwd_bwd
generated._matmul_hd_fwd_bwd = Fake(backward_kernel.fn)

M, N, K = 37, 24, 40
a, b = torch.randn(M, K), torch.randn(K, N)
with generated._capturing() as launches:
    c = generated.matmul_host_desc(a, b)
launch = launches[0]
for name, t in (("a_desc", a), ("b_desc", b), ("c_desc", c)):
    assert launch.tensors[name] is t, name
    assert name not in launch.args, name
expected = {"a_desc_shape0": M, "a_desc_shape1": K, "a_desc_stride0": K, "a_desc_stride1": 1,
            "a_desc_block0": 32, "a_desc_block1": 16, "b_desc_block0": 16, "b_desc_block1": 32,
            "c_desc_shape0": M, "c_desc_shape1": N, "c_desc_stride0": N}
for name, value in expected.items():
    assert launch.args[name] == value, (name, launch.args[name], value)

layouts = [(c.shape, tuple(c.stride()), c.dtype, c.device)]
generated.matmul_host_desc_backward(launches, (), a, b, (c,), layouts, [torch.ones(M, N)])
(grid, args, kwargs), = generated._matmul_hd_fwd_bwd.calls
assert grid == launch.grid, grid
bound = inspect.signature(backward_kernel.fn).bind(*args, **kwargs).arguments
assert bound["a_desc"] is a and bound["b_desc"] is b, "the kernel reads the descriptors' bases"
for name, value in expected.items():
    if name in bound:
        assert bound[name] == value, (name, bound[name], value)
assert bound["a_desc_shape0"] == M and bound["c_desc_block1"] == 32, bound
print("host descriptors ok")

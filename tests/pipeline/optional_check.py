"""Runs the generated module of tests/pipeline/data/library/optional_pointers.py (argv[1]) without a
GPU: the forward kernel is replaced by a torch version, the backward kernels by fakes that record
which one ran. With tensors for w and b the backward specialized on their not being None runs; with
b None (the module was generated for a tensor) the launcher raises, and no backward runs."""
import importlib.util
import sys

import torch

spec = importlib.util.spec_from_file_location("generated", sys.argv[1])
generated = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generated)

calls = []


def affine_silu_fwd(X, W, B, Y, N, BLOCK, **_):
    z = X * (W if W is not None else 1.0) + (B if B is not None else 0.0)
    Y.copy_(z * torch.sigmoid(z))


class Fake:
    def __init__(self, name, jit, body=None):
        self.name = name
        self.arg_names = jit.arg_names
        self.fn = jit.fn  # the recorder reads the signature through it
        self.body = body

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            bound = {**dict(zip(self.arg_names, args)), **kwargs}
            calls.append(self.name)
            if self.body is not None:
                with torch.no_grad():
                    self.body(**bound)
        return launch


recorded = generated._affine_silu_fwd
recorded.kernel = Fake("_affine_silu_fwd", recorded.kernel, affine_silu_fwd)
backward = "_affine_silu_fwd_bwd_W_not_None_B_not_None"
setattr(generated, backward, Fake(backward, getattr(generated, backward)))

x = torch.randn(3, 20, requires_grad=True)
w = torch.randn(20, requires_grad=True)
b = torch.randn(20, requires_grad=True)
generated.forward(x, w, b).sum().backward()
assert calls == ["_affine_silu_fwd", backward], calls

calls.clear()
y = generated.forward(x, w, None)
try:
    y.sum().backward()
    raise AssertionError("a backward specialized on b not being None ran with b None")
except RuntimeError as e:
    assert str(e) == ("no backward of _affine_silu_fwd was generated for W='<tensor>', B=None (its backward is "
                      "specialized on W, B); regenerate with a SWEEP entry or a call that uses these values"), e
assert calls == ["_affine_silu_fwd"], calls
print("optional pointers launcher ok")

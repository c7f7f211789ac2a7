"""Runs the generated module of tests/pipeline/data/spec/helper_activation.py (argv[1]) without a
GPU: the forward kernel is replaced by a torch version, the backward kernels by fakes that record
which one ran. Each traced activation must run its own backward; an activation the module was not
generated for must raise the launcher's RuntimeError, never run another activation's backward."""
import importlib.util
import sys

import torch

spec = importlib.util.spec_from_file_location("generated", sys.argv[1])
generated = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generated)

calls = []


def act_fwd(X, W, Y, N, ACT, BLOCK, **_):
    h = X * W
    Y.copy_(torch.tanh(h) if ACT == "tanh" else torch.nn.functional.softplus(h))


class Fake:
    def __init__(self, name, jit, body=None):
        self.name = name
        self.arg_names = jit.arg_names
        self.fn = jit.fn  # the recorder reads the signature through it
        self.body = body

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            bound = {**dict(zip(self.arg_names, args)), **kwargs}
            calls.append((self.name, bound))
            if self.body is not None:
                with torch.no_grad():
                    self.body(**bound)
        return launch


recorded = generated._act_fwd
recorded.kernel = Fake("_act_fwd", recorded.kernel, act_fwd)
for name in ("_act_fwd_bwd_ACT_tanh", "_act_fwd_bwd_ACT_softplus"):
    setattr(generated, name, Fake(name, getattr(generated, name)))

for activation in ("tanh", "softplus"):
    calls.clear()
    x = torch.randn(3, 20, requires_grad=True)
    w = torch.randn(20, requires_grad=True)
    generated.forward(x, w, activation=activation).sum().backward()
    ran = [name for name, _ in calls if name != "_act_fwd"]
    assert ran == ["_act_fwd_bwd_ACT_" + activation], ran

calls.clear()
x = torch.randn(3, 20, requires_grad=True)
w = torch.randn(20, requires_grad=True)
y = generated.forward(x, w, activation="gelu")
try:
    y.sum().backward()
    raise AssertionError("a backward ran for an activation the module was not generated for")
except RuntimeError as e:
    assert str(e) == ("no backward of _act_fwd was generated for ACT='gelu' (its backward is specialized on ACT); "
                      "regenerate with a SWEEP entry or a call that uses these values"), e
assert [name for name, _ in calls] == ["_act_fwd"], calls
print("specialization launcher ok")

"""Runs the launcher of a generated module for tests/pipeline/data/chain.py (argv[1]) without a GPU:
forward and backward kernels are replaced by fakes that record their arguments, then the checks are
on how the backward chains the launches: order, shared shadow buffers, saved outputs and temps."""
import importlib.util
import sys

import torch

spec = importlib.util.spec_from_file_location("generated", sys.argv[1])
generated = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generated)

calls = []


class Fake:
    def __init__(self, name, jit):
        self.name = name
        self.arg_names = jit.arg_names
        self.fn = jit.fn  # the recorder reads the signature through it

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            calls.append((self.name, {**dict(zip(self.arg_names, args)), **kwargs}))
        return launch


for name in ("fill_scale", "squash", "mix", "finish"):
    recorded = getattr(generated, name)
    recorded.kernel = Fake(name, recorded.kernel)
for name in ("squash_bwd", "mix_bwd", "finish_bwd"):
    setattr(generated, name, Fake(name, getattr(generated, name)))

x = torch.randn(100, requires_grad=True)
w = torch.randn(4, requires_grad=True)
scale = torch.rand(100)
h, y = generated.forward(x, w, scale)
fwd = {name: args for name, args in calls}
calls.clear()
(h.sum() + 2 * y.sum()).backward()

order = [name for name, _ in calls]
assert order == ["finish_bwd", "mix_bwd", "squash_bwd"], order
bwd = {name: args for name, args in calls}
# x's gradient: one buffer that both launches reading x add to.
assert bwd["finish_bwd"]["DX"] is bwd["squash_bwd"]["DX"]
# The temporary T: the backward of finish adds its cotangent, the backward of mix reads it.
assert bwd["finish_bwd"]["DT"] is bwd["mix_bwd"]["DT"]
assert bwd["finish_bwd"]["T"] is fwd["mix"]["T"], "the temporary the forward wrote is saved"
assert bwd["mix_bwd"]["S"] is fwd["fill_scale"]["S"]
# The output h is read by mix: its cotangent is a float32 copy of h's gradient, shared with squash.
assert bwd["mix_bwd"]["DH"] is bwd["squash_bwd"]["DH"]
assert bwd["mix_bwd"]["DH"] is not h.grad and bool((bwd["mix_bwd"]["DH"] == 1).all())
assert bwd["mix_bwd"]["H"].data_ptr() == h.data_ptr(), "the output's value is saved for mix's backward"
assert bool((bwd["finish_bwd"]["DY"] == 2).all())
assert x.grad is not None and w.grad is not None and x.grad.shape == x.shape
print("chain launcher ok")

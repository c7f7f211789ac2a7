"""Runs the generated module of tests/pipeline/data/inplace_chain.py (argv[1]) without a GPU: the
forward kernels are replaced by torch versions that write their buffers in place as the Triton ones
do, the backward kernels by fakes that record their arguments. Checks how the module handles
mutation: the copies saved before a launch overwrites a buffer, the input updated in place and
returned (marked dirty, its shadow seeded with its output's gradient), and autograd's rule that a
leaf requiring grad cannot be updated in place."""
import importlib.util
import sys

import torch

spec = importlib.util.spec_from_file_location("generated", sys.argv[1])
generated = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generated)

calls = []


def rep(t, n):
    return t.repeat(n // 4 + 1)[:n]


def scale(X, W, Y, n, **_):
    Y.copy_(X * rep(W, n))


def bias_silu_(Y, B, n, **_):
    t = Y + rep(B, n)
    Y.copy_(t * torch.sigmoid(t))


def overwrite_head(X, Y, n_head, **_):
    Y[:n_head] = torch.sin(X[:n_head])


def add_square(X, Y, n, **_):
    Y.add_(X * X)


def gate_(Z_IN, Y, Z_OUT, n, **_):
    Z_OUT.copy_(Z_IN * torch.sigmoid(Y) + Z_IN * Z_IN)


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


for body in (scale, bias_silu_, overwrite_head, add_square, gate_):
    recorded = getattr(generated, body.__name__)
    recorded.kernel = Fake(body.__name__, recorded.kernel, body)
for name in ("scale_bwd", "bias_silu__bwd", "overwrite_head_bwd", "add_square_bwd", "gate__bwd"):
    setattr(generated, name, Fake(name, getattr(generated, name)))

assert generated.DIRTY == ("z",), generated.DIRTY
n = 100
x, w, b = torch.randn(n), torch.randn(4), torch.randn(4)
z_leaf = torch.randn(n, requires_grad=True)
try:
    generated.forward(x, w, b, z_leaf)
    raise AssertionError("updating a leaf that requires grad in place must fail")
except RuntimeError as e:
    assert "in-place" in str(e), e
calls.clear()

x.requires_grad_()
z0 = z_leaf.detach().clone()
z = z_leaf * 1.0  # non-leaf, as autograd requires of a tensor updated in place
y, z_out = generated.forward(x, w, b, z)
assert z_out is z, "the stub's in-place result is the input object itself"
fwd = {name: args for name, args in calls}
calls.clear()

y_after_scale = x.detach() * rep(w, n)
gy, gz = torch.randn(n), torch.randn(n)
torch.autograd.backward([y, z_out], [gy, gz])

order = [name for name, _ in calls]
assert order == ["gate__bwd", "add_square_bwd", "overwrite_head_bwd", "bias_silu__bwd", "scale_bwd"], order
bwd = {name: args for name, args in calls}
# Copies saved before a launch overwrote the buffer: y as bias_silu_ read it, z as gate_ read it.
assert torch.equal(bwd["bias_silu__bwd"]["Y"], y_after_scale)
assert bwd["bias_silu__bwd"]["Y"].data_ptr() != fwd["bias_silu_"]["Y"].data_ptr()
assert torch.equal(bwd["gate__bwd"]["Z_IN"], z0)
# gate_ reads y after every launch that writes it: the output itself, no copy.
assert bwd["gate__bwd"]["Y"].data_ptr() == y.data_ptr()
# One shadow for z, read as the cotangent of its new contents and written as the gradient of its
# old ones: a float32 copy of z's output gradient, never the caller's tensor.
assert bwd["gate__bwd"]["DZ_IN"] is bwd["gate__bwd"]["DZ_OUT"]
assert bwd["gate__bwd"]["DZ_IN"].data_ptr() != gz.data_ptr()
assert torch.equal(bwd["gate__bwd"]["DZ_IN"], gz)
# y's shadow: one buffer through every launch that writes or reads y.
dy = bwd["gate__bwd"]["DY"]
for name in ("add_square_bwd", "overwrite_head_bwd", "bias_silu__bwd", "scale_bwd"):
    assert bwd[name]["DY"] is dy, name
assert z_leaf.grad is not None and z_leaf.grad.shape == z_leaf.shape
print("in-place launcher ok")

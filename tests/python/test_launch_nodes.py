"""The runtime of a module whose stub's torch code autograd differentiates
(src/emit/templates/launch_nodes.py): each launch its own autograd node. Fake kernels and
hand-written launch backwards stand in for triton's and tad's; CPU torch only."""

import os
import sys
import unittest

import _support
import torch

TEMPLATES = os.path.join(_support.REPO, "src", "emit", "templates")
sys.path.insert(0, TEMPLATES)  # launch_nodes.py imports its sibling module_runtime.py
ln = _support.import_file(os.path.join(TEMPLATES, "launch_nodes.py"))


def square_fn(X, Y, n, BLOCK: "tl.constexpr" = 4):
    pass


class FakeJit:
    """A @triton.jit kernel that writes Y = X * X in place, as a kernel writes memory (no autograd)."""

    def __init__(self):
        self.fn = square_fn
        self.launched = 0

    def __getitem__(self, grid):
        def launch(X, Y, n, **kwargs):
            self.launched += 1
            Y.data.copy_(X.data * X.data)  # .data: no version bump, as a kernel's write

        return launch


class LaunchNodes(unittest.TestCase):
    def setUp(self):
        self.seen = []

        def backward(launches, temps, X, Y, outs, out_layouts, grads):
            self.seen.append((launches, X, Y, out_layouts))
            return (2 * X * grads[0], None)

        self.node = ln._Node("square_fn", backward, ("X", "Y"), ("Y",), ("X",), ("X",), ())
        self.kernel = ln._RecordedNode(FakeJit())

    def run_stub(self, stub, *args):
        with ln._capturing_nodes((self.node,)) as launches:
            out = stub(*args)
        self.assertEqual([l.kernel for l in launches], ["square_fn"])
        return out

    def test_torch_code_after_the_launch_is_differentiated(self):
        x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)

        def stub(x):
            y = torch.empty_like(x)
            self.kernel[(1,)](x, y, x.numel())
            return y.sum(0)

        self.run_stub(stub, x).sum().backward()
        torch.testing.assert_close(x.grad, 2 * x.detach())

    def test_torch_code_may_update_the_written_tensor_in_place(self):
        x = torch.randn(5, dtype=torch.float64, requires_grad=True)

        def stub(x):
            y = torch.empty_like(x)
            self.kernel[(1,)](x, y, x.numel())
            y += x.exp()
            return y

        self.run_stub(stub, x).sum().backward()
        torch.testing.assert_close(x.grad, 2 * x.detach() + x.detach().exp())
        _, X, Y, layouts = self.seen[0]
        self.assertIsInstance(Y, ln._Layout, "a written tensor reaches the backward as its layout only")
        self.assertEqual((tuple(Y.shape), Y.stride()), ((5,), (1,)))
        self.assertEqual(layouts[0][:2], (torch.Size([5]), (1,)))

    def test_a_saved_input_updated_in_place_later_raises_rather_than_corrupts(self):
        x = torch.randn(5, dtype=torch.float64, requires_grad=True)

        def stub(x):
            x2 = x * 1.0
            y = torch.empty_like(x)
            self.kernel[(1,)](x2, y, x.numel())
            x2.mul_(3.0)
            return y + x2

        out = self.run_stub(stub, x)
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
            out.sum().backward()

    def test_views_map_back_to_their_owners(self):
        x = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)

        def stub(x):
            out = torch.empty(2, 4, dtype=x.dtype)
            self.kernel[(1,)](x.view(-1), out.view(-1), x.numel())
            return out * 3.0

        self.run_stub(stub, x).sum().backward()
        torch.testing.assert_close(x.grad, 6 * x.detach())

    def test_the_written_part_of_a_tensor_that_requires_grad_is_replaced(self):
        # y's old contents require grad: where the launch overwrites y, their gradient is the
        # backward's (here None for Y: zero); the stub's later use of y sees the new contents only.
        node = ln._Node("square_fn", self.node.backward, ("X", "Y"), ("Y",), ("X", "Y"), ("X",), ())
        x = torch.randn(4, dtype=torch.float64, requires_grad=True)
        w = torch.randn(6, dtype=torch.float64, requires_grad=True)

        def stub(x, w):
            y = w * 1.0
            self.kernel[(1,)](x, y[:4], 4)
            return y

        with ln._capturing_nodes((node,)):
            stub(x, w).sum().backward()
        torch.testing.assert_close(x.grad, 2 * x.detach())
        torch.testing.assert_close(w.grad, torch.tensor([0, 0, 0, 0, 1, 1], dtype=torch.float64))

    def test_a_launch_that_gets_nothing_requiring_grad_runs_plain(self):
        x = torch.randn(5)
        y = torch.empty_like(x)
        self.run_stub(lambda x: self.kernel[(1,)](x, y, 5), x)
        self.assertIsNone(y.grad_fn)
        self.assertEqual(self.seen, [])

    def test_a_tensor_requiring_grad_the_backward_was_not_generated_for_is_refused(self):
        node = ln._Node("square_fn", None, ("X", "Y"), ("Y",), (), (), ())
        x = torch.randn(5, requires_grad=True)
        with ln._capturing_nodes((node,)):
            with self.assertRaisesRegex(RuntimeError, r"launch 0 of square_fn: \['X'\] require grad, but its "
                                                      r"backward was generated for \[\] only"):
                self.kernel[(1,)](x, torch.empty(5), 5)

    def test_outside_capturing_a_launch_only_runs_the_kernel(self):
        x = torch.randn(5, requires_grad=True)
        y = torch.empty(5)
        self.kernel[(1,)](x, y, 5)
        self.assertIsNone(y.grad_fn)
        self.assertEqual(self.kernel.kernel.launched, 1)


if __name__ == "__main__":
    unittest.main()

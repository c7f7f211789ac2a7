"""Runtime of a module whose stub's torch code autograd differentiates (docs/stub-autograd.md,
src/emit/node_module.cpp): the stub runs under autograd and each launch of a recorded kernel is its
own autograd node, _LaunchFunction, whose backward is the backward of that launch alone.

A template (src/emit/templates/README.md): the library embeds the part of this file below the
`# ---- tad:embed ----` line, byte for byte, right after module_runtime.py's part, whose names it
uses; the imports above that line make this file importable on its own (tests/python/
test_templates.py).
"""

import torch

from module_runtime import _as_layout, _capture, _capturing, _Recorded, _snapshot


# ---- tad:embed ---- the generated module holds everything below this line, byte for byte
# ---- launch nodes: each launch its own autograd node, so that the stub's torch code is differentiated ----
class _Node:
    """The launches of `kernel` that get these views, as a stub of their own: its inputs are the
    views of the tensors a launch gets, a tensor parameter per view, named by the first kernel
    parameter that gets it (`params`); `written` are those it writes (the node's outputs, updated
    in place); `backward(launches, temps, *params, outs, out_layouts, grads)` (None: the launch
    needs no backward) was generated for `grad_params`; it reads `saved`, the layouts of `written`
    and the copies of `snapshots` taken before the launch."""

    def __init__(self, kernel, backward, params, written, grad_params, saved, snapshots):
        self.kernel = kernel
        self.backward = backward
        self.params = params
        self.written = written
        self.grad_params = grad_params
        self.saved = saved
        self.snapshots = snapshots


class _capturing_nodes(_capturing):
    """_capturing, and each launch runs as the autograd node of its kernel and views in `nodes`."""

    def __init__(self, nodes):
        super().__init__()
        self.nodes = nodes

    def __enter__(self):
        self.saved_nodes = getattr(_capture, "nodes", None)
        _capture.nodes = self.nodes
        return super().__enter__()

    def __exit__(self, *exc):
        _capture.nodes = self.saved_nodes
        return super().__exit__(*exc)


def _view_params(tensors):
    """The tensor parameters of a launch (`tensors`: name -> tensor, in parameter order) that name
    the views it gets: the first parameter getting each view."""
    seen, out = set(), []
    for name, t in tensors.items():
        view = (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype)
        if view not in seen:
            seen.add(view)
            out.append(name)
    return tuple(out)


def _storage_owner(t):
    """The tensor whose storage t views (t itself when it is no view)."""
    while t._base is not None:
        t = t._base
    return t


class _RecordedNode(_Recorded):
    """_Recorded that, inside _capturing_nodes with autograd on, runs a launch whose tensors require
    grad as its node: _LaunchFunction over the storage owners of its tensors."""

    def __getitem__(self, grid):
        plain = super().__getitem__(grid)

        def launch(*args, **kwargs):
            if self.saved:
                kwargs = self._with_saved(grid, args, kwargs)
            log = getattr(_capture, "launches", None)
            nodes = getattr(_capture, "nodes", None)
            if log is None or nodes is None or not torch.is_grad_enabled():
                return plain(*args, **kwargs)
            # tad's residual buffers are the node's temporaries, no views of the stub's
            tensors = {k: t for k, t in self._tensors(args, kwargs).items() if k not in self.saved}
            params = _view_params(tensors)
            needs = [p for p in params if tensors[p].requires_grad]
            if not needs:
                return plain(*args, **kwargs)
            node = next((n for n in nodes if n.kernel == self.name and n.params == params), None)
            if node is None:
                raise RuntimeError(f"launch {len(log)} of {self.name}: no backward was generated for a launch of it "
                                   f"whose views are named {list(params)}; regenerate with a SWEEP entry or call "
                                   f"that launches it so")
            views = [tensors[p] for p in node.params]
            unknown = [p for p in needs if p not in node.grad_params]
            if unknown:
                raise RuntimeError(f"launch {len(log)} of {self.name}: {unknown} require grad, but its backward was "
                                   f"generated for {list(node.grad_params)} only; regenerate with a call in which "
                                   f"they require grad")
            result = []

            def run():
                pre = {p: _snapshot(tensors[p]) for p in node.snapshots}
                result.append(self.kernel[grid](*args, **kwargs))
                record = self._record(grid, args, kwargs)
                record.pre.update(pre)
                record.temps = tuple(record.tensors[k] for k in self.saved)
                record.tensors = None
                log.append(record)
                return record

            owners = {}
            for v in views:
                owners.setdefault(id(_storage_owner(v)), _storage_owner(v))
            _LaunchFunction.apply(node, run, views, *owners.values())
            return result[0]

        return launch


class _Layout:
    """What a launch's backward reads of a tensor the launch writes: its layout (the contents before
    the launch it reads from the snapshot). Keeping the tensor itself would keep later in-place
    torch code on it from running, or tie it to its own node."""

    def __init__(self, t):
        self.shape, self.dtype, self.device, self.strides = t.shape, t.dtype, t.device, tuple(t.stride())

    def stride(self):
        return self.strides


def _region(g, layout):
    """The part of g (an owner's gradient, with the owner's layout) that a view of layout
    (shape, stride, dtype, device, offset within the owner) covers."""
    shape, stride, _, _, offset = layout
    return g.as_strided(shape, stride, g.storage_offset() + offset)


def _owner_buffer(g, layout):
    """A gradient of an owner of this layout that the node may write: a copy of g, or zeros."""
    shape, stride, dtype, device = layout
    out = torch.empty_strided(shape, stride, dtype=dtype, device=device)
    return out.zero_() if g is None else out.copy_(g)


class _LaunchFunction(torch.autograd.Function):
    """One launch: runs it, marks the owners of the tensors it writes dirty and returns them. The
    backward runs the launch's backward on the views the kernel got, and assembles each owner's
    gradient: the owner's incoming gradient with each written view's part replaced by the gradient
    of its contents before the launch, plus the gradients of the views it only reads."""

    @staticmethod
    def forward(ctx, node, run, views, *owners):
        ctx.node, ctx.launch = node, run()
        index = {id(o): i for i, o in enumerate(owners)}
        ctx.where = [index[id(_storage_owner(v))] for v in views]
        ctx.layouts = [(v.shape, tuple(v.stride()), v.dtype, v.device, v.storage_offset() - owners[i].storage_offset())
                       for v, i in zip(views, ctx.where)]
        ctx.owner_layouts = [(o.shape, tuple(o.stride()), o.dtype, o.device) for o in owners]
        ctx.dirty = sorted({ctx.where[node.params.index(p)] for p in node.written})
        ctx.mark_dirty(*(owners[i] for i in ctx.dirty))
        ctx.written = {p: _Layout(v) for p, v in zip(node.params, views) if p in node.written}
        ctx.save_for_backward(*(v for p, v in zip(node.params, views) if p in node.saved))
        return tuple(owners[i] for i in ctx.dirty)

    @staticmethod
    def backward(ctx, *grads):
        node = ctx.node
        saved = dict(zip([p for p in node.params if p in node.saved], ctx.saved_tensors))
        incoming = {i: _owner_buffer(g, ctx.owner_layouts[i]) for i, g in zip(ctx.dirty, grads)}
        cotangents, layouts = [], []
        for p in node.written:
            j = node.params.index(p)
            cotangents.append(_region(incoming[ctx.where[j]], ctx.layouts[j]))
            layouts.append(ctx.layouts[j][:4])
        values = (saved[p] if p in saved else ctx.written.get(p) for p in node.params)
        got = node.backward([ctx.launch], ctx.launch.temps, *values, (None,) * len(node.written),
                            layouts, cotangents)
        out = []
        for i, needed in enumerate(ctx.needs_input_grad[3:]):
            if not needed:
                out.append(None)
                continue
            g = incoming[i] if i in incoming else _owner_buffer(None, ctx.owner_layouts[i])
            for j, p in enumerate(node.params):
                if ctx.where[j] != i:
                    continue
                part = _region(g, ctx.layouts[j])
                if p in node.written:
                    part.copy_(got[j]) if got[j] is not None else part.zero_()
                elif got[j] is not None:
                    part.add_(got[j])
            out.append(g)
        return (None, None, None, *out)

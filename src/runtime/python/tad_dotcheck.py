"""The dot-product test of a generated module: <J v, u> through its forward mode (`jvp`) against
<v, J^T u> through its backward (autograd through `forward`), for random v (per gradient input) and u
(per differentiable output). Neither side uses finite differences or a reference: the two modes
differentiate the same function at the same point, so they agree up to rounding.

The comparison itself (tolerances, rel_err) is tad_dotcompare's, which @tad.autodiff's check on
first use shares.
"""

import torch

import tad_userfile as userfile
from tad_dotcompare import RTOL, TINY, compare, random_like, tolerance  # noqa: F401 (API)


def _tensors(result):
    values = result if isinstance(result, (tuple, list)) else (result,)
    return [(i, v) for i, v in enumerate(values) if torch.is_tensor(v)]


def dot_product(forward, jvp, bound, grad_inputs, seed, rtol, dirty=()):
    """forward(*args, **kwargs): the stub, differentiable in grad_inputs; jvp(*args, tangents,
    **kwargs) -> (outputs, their tangents), tangents a dict by gradient input name; bound: the
    stub's arguments (inspect.BoundArguments, left unchanged); dirty: the arguments the stub updates
    in place, which each call gets copies of."""
    b = bound.signature.bind(*bound.args, **bound.kwargs)
    leaves = []
    for name in grad_inputs:
        leaf = b.arguments[name].detach().clone().requires_grad_()
        b.arguments[name] = leaf
        leaves.append(leaf)
    b = userfile.fresh(b, dirty)
    diff = [(i, o) for i, o in _tensors(forward(*b.args, **b.kwargs)) if o.requires_grad]
    us = [random_like(o, seed + 3000 + i) for i, o in diff]
    grads = (torch.autograd.grad([o for _, o in diff], leaves, us, allow_unused=True) if diff
             else [None] * len(leaves))
    vs = [random_like(x, seed + 4000 + k) for k, x in enumerate(leaves)]
    vjp_terms = [v.double() * g.double() for v, g in zip(vs, grads) if g is not None]

    b = userfile.fresh(bound, dirty)
    try:
        with torch.no_grad():
            _, tangents = jvp(*b.args, tangents=dict(zip(grad_inputs, vs)), **b.kwargs)
    except Exception as e:  # triton.runtime.errors.OutOfResources, before the kernel ran
        if type(e).__name__ != "OutOfResources" or "shared memory" not in str(e):
            raise
        # A tangent kernel holds the forward's tiles and their tangents together; where they do
        # not fit, the case keeps its gradient check and says why it has no dot-product test.
        return {"skipped": "forward mode needs more shared memory than the GPU has: "
                           + str(e).splitlines()[0]}
    tangents = tangents if isinstance(tangents, (tuple, list)) else (tangents,)
    jvp_terms = []
    for (i, o), u in zip(diff, us):
        t = tangents[i] if i < len(tangents) else None
        if t is None:
            continue
        if tuple(t.shape) != tuple(o.shape):
            raise ValueError(f"jvp returned a tangent of shape {list(t.shape)} for output {i} of "
                             f"shape {list(o.shape)}")
        jvp_terms.append(u.double() * t.double())
    return compare(jvp_terms, vjp_terms, rtol)


def check(generated, bound, grad_inputs, seed, dtype):
    """The case's dot_product entry for a generated module: {"skipped": why} when it has no jvp (or
    one that raises JVP_UNSUPPORTED)."""
    if getattr(generated, "JVP_UNSUPPORTED", None) or not callable(getattr(generated, "jvp", None)):
        return {"skipped": getattr(generated, "JVP_UNSUPPORTED", None)
                or "the generated module has no jvp"}
    # Kernels multiplying float32 tiles at TF32 precision round like float16 ones.
    rtol = tolerance(dtype, getattr(generated, "TF32", False))
    return dot_product(generated.forward, generated.jvp, bound, grad_inputs, seed, rtol,
                       getattr(generated, "DIRTY", ()))


def failure_message(dot):
    return (f"dot-product test fails: <J v, u> = {dot['jvp']}, <v, J^T u> = {dot['vjp']}, "
            f"rel err {dot['rel_err']} (tolerance {dot['rtol']})")

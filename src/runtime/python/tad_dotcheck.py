"""The dot-product test of a generated module: <J v, u> through its forward mode (`jvp`) against
<v, J^T u> through its backward (autograd through `forward`), for random v (per gradient input) and u
(per differentiable output). Neither side uses finite differences or a reference: the two modes
differentiate the same function at the same point, so they agree up to rounding.

Both sums are accumulated in float64 from values rounded to the test dtype. rel_err is |jvp - vjp|
relative to the larger of |jvp|, |vjp| and the root sum of squares of either side's terms: with random
u and v both sums are sums of terms of random sign, and the rounding of each term (of J v and J^T u
stored in the test dtype) adds up like that root sum of squares, so a sum that cancels by chance does
not inflate the error, while a wrong sign or factor on a fraction f of the terms moves it by about
2 sqrt(f).
"""

import math

import torch

import tad_userfile as userfile

# Per test dtype. float16 / bfloat16: J v and J^T u are stored with unit roundoff 4.9e-4 / 3.9e-3
# and tangent kernels may multiply in the input dtype, so rel_err is a small multiple of that;
# float32: float32 reductions of long rows (~sqrt(K) eps); float64: kernels that load with
# .to(tl.float32) compute in float32 whatever their input dtype.
RTOL = {"float64": 1e-5, "float32": 1e-4, "float16": 2e-2, "bfloat16": 5e-2}
TINY = 1e-30


def random_like(t, seed):
    """Standard normal values of t's shape, rounded to t's dtype, on t's device (drawn on the CPU)."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(t.shape, generator=gen, dtype=torch.float64).to(device=t.device, dtype=t.dtype)


def compare(jvp_terms, vjp_terms, rtol):
    """The dot_product entry from the terms (float64 tensors) of sum_j <u_j, (J v)_j> and of
    sum_i <v_i, (J^T u)_i>."""
    a = sum(float(t.sum()) for t in jvp_terms)
    b = sum(float(t.sum()) for t in vjp_terms)
    rss_a = math.sqrt(sum(float((t * t).sum()) for t in jvp_terms))
    rss_b = math.sqrt(sum(float((t * t).sum()) for t in vjp_terms))
    rel = abs(a - b) / max(abs(a), abs(b), rss_a, rss_b, TINY)
    finite = math.isfinite(rel)
    return {"jvp": a if math.isfinite(a) else None, "vjp": b if math.isfinite(b) else None,
            "rel_err": rel if finite else None, "rtol": rtol, "ok": finite and rel <= rtol}


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
    with torch.no_grad():
        _, tangents = jvp(*b.args, tangents=dict(zip(grad_inputs, vs)), **b.kwargs)
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
    """The case's dot_product entry for a generated module: {"skipped": why} when it has no jvp."""
    if not callable(getattr(generated, "jvp", None)):
        return {"skipped": getattr(generated, "JVP_UNSUPPORTED", None)
                or "the generated module has no jvp"}
    # Kernels multiplying float32 tiles at TF32 precision round like float16 ones.
    precision = "float16" if dtype == "float32" and getattr(generated, "TF32", False) else dtype
    return dot_product(generated.forward, generated.jvp, bound, grad_inputs, seed,
                       RTOL.get(precision, RTOL["float32"]), getattr(generated, "DIRTY", ()))


def failure_message(dot):
    return (f"dot-product test fails: <J v, u> = {dot['jvp']}, <v, J^T u> = {dot['vjp']}, "
            f"rel err {dot['rel_err']} (tolerance {dot['rtol']})")

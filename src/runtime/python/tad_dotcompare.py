"""The comparison of the dot-product test <J v, u> = <v, J^T u>, shared by the worker's check
(tad_dotcheck) and @tad.autodiff's check on first use (the Python package's copy, tad/_dotcompare.py,
made by bindings/python/setup.py). It needs math and torch only, so that both can import it.

Both sums are accumulated in float64 from values rounded to the test dtype. rel_err is |jvp - vjp|
relative to the larger of |jvp|, |vjp| and the root sum of squares of either side's terms: with random
u and v both sums are sums of terms of random sign, and the rounding of each term (of J v and J^T u
stored in the test dtype) adds up like that root sum of squares, so a sum that cancels by chance does
not inflate the error, while a wrong sign or factor on a fraction f of the terms moves it by about
2 sqrt(f).
"""

import math

import torch

# Per test dtype. float16 / bfloat16: J v and J^T u are stored with unit roundoff 4.9e-4 / 3.9e-3
# and tangent kernels may multiply in the input dtype, so rel_err is a small multiple of that;
# float32: float32 reductions of long rows (~sqrt(K) eps); float64: kernels that load with
# .to(tl.float32) compute in float32 whatever their input dtype.
RTOL = {"float64": 1e-5, "float32": 1e-4, "float16": 2e-2, "bfloat16": 5e-2}
TINY = 1e-30


def tolerance(dtype, tf32=False):
    """The tolerance for values of `dtype` (a name: "float32"); tf32: the kernels multiply float32
    tiles at TF32 precision, which rounds like float16. Other dtypes get float32's."""
    precision = "float16" if dtype == "float32" and tf32 else dtype
    return RTOL.get(precision, RTOL["float32"])


def random_like(t, seed):
    """Standard normal values of t's shape, rounded to t's dtype, on t's device (drawn on the CPU)."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(t.shape, generator=gen, dtype=torch.float64).to(device=t.device, dtype=t.dtype)


def reduce(term):
    """(sum, sum of squares) of one term tensor (float64), as Python floats: what compare_reduced
    needs of it, so that a caller can drop each term as soon as it is reduced."""
    return float(term.sum()), float((term * term).sum())


def compare_reduced(jvp_parts, vjp_parts, rtol):
    """The dot_product entry from each side's terms reduced to (sum, sum of squares)."""
    a = sum(s for s, _ in jvp_parts)
    b = sum(s for s, _ in vjp_parts)
    rss_a = math.sqrt(sum(q for _, q in jvp_parts))
    rss_b = math.sqrt(sum(q for _, q in vjp_parts))
    rel = abs(a - b) / max(abs(a), abs(b), rss_a, rss_b, TINY)
    finite = math.isfinite(rel)
    return {"jvp": a if math.isfinite(a) else None, "vjp": b if math.isfinite(b) else None,
            "rel_err": rel if finite else None, "rtol": rtol, "ok": finite and rel <= rtol}


def compare(jvp_terms, vjp_terms, rtol):
    """The dot_product entry from the terms (float64 tensors) of sum_j <u_j, (J v)_j> and of
    sum_i <v_i, (J^T u)_i>."""
    return compare_reduced([reduce(t) for t in jvp_terms], [reduce(t) for t in vjp_terms], rtol)

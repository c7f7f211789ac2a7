"""Forward-mode helpers of the modules tad generates (src/emit/jvp_module.cpp): the tangents as the
jvp launcher receives them, and the tangent buffers it gives the tangent kernels.

A template (src/emit/templates/README.md): the library embeds the part of this file below the
`# ---- tad:embed ----` line, byte for byte, in each generated module, whose header already has the
imports and which defines GRAD_INPUTS itself. What is above that line makes this file importable on
its own (tests/python/test_templates.py) and readable by linters.
"""

import torch

GRAD_INPUTS = ()  # the stub's differentiable parameters: the generated module's own; tests set it


# ---- tad:embed ---- the generated module holds everything below this line, byte for byte
def _tangent_list(tangents):
    """Tangents of GRAD_INPUTS in their order, from a sequence in that order, a dict by name or, with
    one gradient input, a tensor; None (or a name left out) is a zero tangent."""
    if tangents is None:
        return [None] * len(GRAD_INPUTS)
    if isinstance(tangents, dict):
        unknown = sorted(set(tangents) - set(GRAD_INPUTS))
        if unknown:
            raise TypeError(f"tangents for {unknown}, which are not GRAD_INPUTS {GRAD_INPUTS}")
        return [tangents.get(name) for name in GRAD_INPUTS]
    tangents = [tangents] if torch.is_tensor(tangents) else list(tangents)
    if len(tangents) != len(GRAD_INPUTS):
        raise TypeError(f"{len(tangents)} tangents for {len(GRAD_INPUTS)} GRAD_INPUTS {GRAD_INPUTS}")
    return tangents


def _tangent_of(v, x, written=False):
    """An input's tangent with the input's layout and dtype: the tangent kernel addresses it as the input.
    A tangent kernel that updates the input in place updates a copy, never the caller's v."""
    out = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=x.device)
    if v is None:
        return out.zero_()
    if tuple(v.shape) != tuple(x.shape):
        raise ValueError(f"a tangent of shape {list(v.shape)} for an input of shape {list(x.shape)}")
    if not written and tuple(v.stride()) == tuple(x.stride()) and v.dtype == x.dtype and v.device == x.device:
        return v
    return out.copy_(v)


def _tangent_buffer(layout):
    """An output's tangent, laid out like the output; zero where the forward stores nothing."""
    shape, stride, dtype, device = layout
    return torch.empty_strided(shape, stride, dtype=dtype, device=device).zero_()

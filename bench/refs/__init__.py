"""Hand-written Triton backward references for bench/suite.py, one module per kernel.

Each module exposes
    GRAD_INPUTS              the names of the arguments it returns gradients for, in order;
    save(**args)             what the forward stores for a backward (untimed by the suite);
    backward(**args, grad_out, saved=None) -> tuple of gradients, in GRAD_INPUTS order;
    min_bytes(**args)        bytes the backward must read and write at least (the copy it is
                             measured against).
`args` are the arguments of the kernel file's reference() by name. With saved=None, backward
computes save() itself, so it also works as a plain function of the reference's tensors.
"""
import importlib

# Kernel file name (examples/*.py, dataset/*.py, bench/kernels/*.py, tests/pipeline/data/**/*.py) ->
# reference module under bench/refs.
BY_FILE = {
    "layernorm": "layernorm",
    "rmsnorm": "rmsnorm",
    "softmax": "softmax",
    "cross_entropy": "cross_entropy",
    "flash_attention": "flash_attention",
    "matmul": "matmul",
    "group_norm": "group_norm",
    "matmul_tutorial": "matmul",
    "layernorm_loops": "layernorm",
    "flash_attention_tutorial": "flash_attention",
}


def for_file(stem):
    """The reference module for a kernel file's stem, or None where none is written."""
    name = BY_FILE.get(stem)
    return importlib.import_module(f"{__name__}.{name}") if name else None

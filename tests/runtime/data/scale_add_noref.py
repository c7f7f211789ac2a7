# scale_add.py without reference(): verify falls back to finite differences (GPU worker tests).
from scale_add import SWEEP, make_args, scale_add  # noqa: F401

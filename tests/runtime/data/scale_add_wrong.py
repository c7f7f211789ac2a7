# scale_add_generated with a wrong gradient for x (GPU worker tests).
from scale_add_generated import GRAD_INPUTS, make_forward  # noqa: F401

forward = make_forward(1.5)

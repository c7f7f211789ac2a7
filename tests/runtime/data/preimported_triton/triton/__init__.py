"""Not the stand-in: a triton that a cpu-mode worker must set aside."""
__version__ = "0.0.0-preimported"

"""Imports triton before the worker starts, as torch does where CUDA and triton are installed."""
import triton  # noqa: F401

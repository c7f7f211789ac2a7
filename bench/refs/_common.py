"""Helpers shared by the references: program counts and per-row launch shapes."""
import torch
import triton


def sm_count(device):
    return torch.cuda.get_device_properties(device).multi_processor_count


def row_warps(block):
    """Warps for a kernel that holds one row of `block` elements per tensor in registers."""
    if block <= 1024:
        return 4
    return 8 if block <= 4096 else 16


def persistent_programs(device, rows, block):
    """About k x #SMs programs: narrow rows leave room for several resident programs per SM."""
    per_sm = max(1, min(4, 8192 // block))
    return max(1, min(rows, per_sm * sm_count(device)))


def next_pow2(n):
    return triton.next_power_of_2(n)


def nbytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)

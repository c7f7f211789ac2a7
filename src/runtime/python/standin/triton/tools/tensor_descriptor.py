"""triton.tools.tensor_descriptor for the tad stand-in (a test harness): a host-side descriptor is a
record of a tensor, its shape and strides and the block shape the kernel accesses it by; tad_trace
records it as such. The checks are the ones a caller can get wrong without a GPU."""


class TensorDescriptor:
    def __init__(self, base, shape, strides, block_shape, padding="zero"):
        self.base = base
        self.shape = [int(s) for s in shape]
        self.strides = [int(s) for s in strides]
        self.block_shape = [int(b) for b in block_shape]
        self.padding = padding
        rank = len(self.shape)
        if not 1 <= rank <= 5 or len(self.strides) != rank or len(self.block_shape) != rank:
            raise ValueError(f"TensorDescriptor: shape {self.shape}, strides {self.strides} and "
                             f"block_shape {self.block_shape} must have one length from 1 to 5")
        if self.strides[-1] != 1:
            raise ValueError("TensorDescriptor: the last dim must be contiguous (stride 1)")
        if padding not in ("zero", "nan"):
            raise ValueError(f"TensorDescriptor: padding must be 'zero' or 'nan', not {padding!r}")

    @staticmethod
    def from_tensor(tensor, block_shape, padding="zero"):
        return TensorDescriptor(tensor, tensor.shape, tensor.stride(), block_shape, padding)

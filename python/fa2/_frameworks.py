"""What fa2 needs from an array library: pointers, element strides, the
fa2 dtype, where the memory lives (backend, device, stream) and how to
allocate outputs and workspace there. NumPy arrays run on the CPU backend;
PyTorch tensors on the CPU backend or on the GPU backend of their device."""
import sys

from . import _library as L

try:  # the torch path needs no NumPy
    import numpy as np
except ImportError:
    np = None

_NUMPY_DTYPES = {"float16": L.DTYPE_F16, "bfloat16": L.DTYPE_BF16, "float32": L.DTYPE_F32}


class NumpyArrays:
    backend, device, stream = L.BACKEND_CPU, 0, None

    @staticmethod
    def fa2_dtype(x):
        dtype = _NUMPY_DTYPES.get(x.dtype.name)
        if dtype is None:
            raise TypeError("fa2 takes float16, float32 or bfloat16 (from ml_dtypes) arrays, not %s"
                            % x.dtype)
        return dtype

    @staticmethod
    def pointer(x):
        return x.ctypes.data

    @staticmethod
    def strides(x):
        return tuple(s // x.itemsize for s in x.strides)

    @staticmethod
    def last_dim_contiguous(x):
        return x if x.strides[-1] == x.itemsize else np.ascontiguousarray(x)

    @staticmethod
    def contiguous(x):
        return np.ascontiguousarray(x)

    @staticmethod
    def empty(shape, like):
        return np.empty(shape, dtype=like.dtype)

    @staticmethod
    def float32(shape, like, zeroed):
        return (np.zeros if zeroed else np.empty)(shape, dtype=np.float32)

    @staticmethod
    def workspace(nbytes, like):
        return np.empty(max(nbytes, 1), dtype=np.uint8)

    @staticmethod
    def int32(x, like):
        return np.ascontiguousarray(x, dtype=np.int32)


class TorchTensors:
    """Bound to the device of the first operand."""

    def __init__(self, first):
        import torch
        self.torch = torch
        self.on_gpu = first.device.type == "cuda"
        if self.on_gpu:
            self.backend = L.BACKEND_HIP if torch.version.hip else L.BACKEND_CUDA
            self.device = first.device.index if first.device.index is not None else torch.cuda.current_device()
            self.stream = torch.cuda.current_stream(self.device).cuda_stream
        elif first.device.type == "cpu":
            self.backend, self.device, self.stream = L.BACKEND_CPU, 0, None
        else:
            raise TypeError("fa2 takes CPU or CUDA/ROCm tensors, not %s tensors" % first.device.type)
        self.dtypes = {torch.float16: L.DTYPE_F16, torch.bfloat16: L.DTYPE_BF16,
                       torch.float32: L.DTYPE_F32}

    def fa2_dtype(self, x):
        if x.dtype not in self.dtypes:
            raise TypeError("fa2 takes float16, bfloat16 or float32 tensors, not %s" % x.dtype)
        return self.dtypes[x.dtype]

    def pointer(self, x):
        return x.data_ptr()

    def strides(self, x):
        return tuple(x.stride())

    def last_dim_contiguous(self, x):
        return x if x.stride(-1) == 1 else x.contiguous()

    def contiguous(self, x):
        return x.contiguous()

    def empty(self, shape, like):
        return self.torch.empty(shape, dtype=like.dtype, device=like.device)

    def float32(self, shape, like, zeroed):
        return (self.torch.zeros if zeroed else self.torch.empty)(shape, dtype=self.torch.float32,
                                                                 device=like.device)

    def workspace(self, nbytes, like):
        return self.torch.empty(max(nbytes, 1), dtype=self.torch.uint8, device=like.device)

    def int32(self, x, like):
        return self.torch.as_tensor(x).to(device=like.device, dtype=self.torch.int32).contiguous()


def arrays_of(*operands):
    """The adapter for the operands, which must all be NumPy arrays or all be
    tensors on one device, of one dtype."""
    first = operands[0]
    if np is not None and isinstance(first, np.ndarray):
        if not all(isinstance(x, np.ndarray) for x in operands):
            raise TypeError("mixing NumPy arrays with other array types")
        arrays = NumpyArrays()
    elif "torch" in sys.modules and isinstance(first, sys.modules["torch"].Tensor):
        torch = sys.modules["torch"]
        if not all(isinstance(x, torch.Tensor) and x.device == first.device for x in operands):
            raise TypeError("all operands must be tensors on %s" % first.device)
        arrays = TorchTensors(first)
    else:
        raise TypeError("fa2 takes NumPy arrays or PyTorch tensors, not %s" % type(first).__name__)
    if any(x.dtype != first.dtype for x in operands):
        raise TypeError("operands have different dtypes: %s"
                        % ", ".join(sorted({str(x.dtype) for x in operands})))
    return arrays

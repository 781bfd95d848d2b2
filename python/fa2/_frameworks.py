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
    def is_float32(x):
        return x.dtype == np.float32

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
    """Bound to one device, made once per device (arrays_of): at small shapes
    the host's time a call, not the GPU's, sets the pace (bench/host_cost.py)."""

    def __init__(self, torch, device):
        self.torch = torch
        self.dtypes = {torch.float16: L.DTYPE_F16, torch.bfloat16: L.DTYPE_BF16,
                       torch.float32: L.DTYPE_F32}
        if device.type == "cuda":
            self.backend = L.BACKEND_HIP if torch.version.hip else L.BACKEND_CUDA
            self.device = device.index if device.index is not None else torch.cuda.current_device()
            # The raw getter behind torch.cuda.current_stream, which builds a
            # Stream object each time (3.5 us a call on the H200 machine).
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            self._stream = (lambda: raw(self.device)) if raw is not None else \
                (lambda: torch.cuda.current_stream(self.device).cuda_stream)
        elif device.type == "cpu":
            self.backend, self.device, self._stream = L.BACKEND_CPU, 0, lambda: None
        else:
            raise TypeError("fa2 takes CPU or CUDA/ROCm tensors, not %s tensors" % device.type)

    @property
    def stream(self):
        """The caller's current stream, read at each call."""
        return self._stream()

    def fa2_dtype(self, x):
        if x.dtype not in self.dtypes:
            raise TypeError("fa2 takes float16, bfloat16 or float32 tensors, not %s" % x.dtype)
        return self.dtypes[x.dtype]

    def is_float32(self, x):
        return x.dtype == self.torch.float32

    def pointer(self, x):
        return x.data_ptr()

    def strides(self, x):
        return x.stride()

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


_torch_adapters = {}


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
        device = first.device
        if not all(isinstance(x, torch.Tensor) and x.device == device for x in operands):
            raise TypeError("all operands must be tensors on %s" % device)
        arrays = _torch_adapters.get(device)
        if arrays is None:
            arrays = _torch_adapters[device] = TorchTensors(torch, device)
    else:
        raise TypeError("fa2 takes NumPy arrays or PyTorch tensors, not %s" % type(first).__name__)
    dtype = first.dtype
    if any(x.dtype != dtype for x in operands):
        raise TypeError("operands have different dtypes: %s"
                        % ", ".join(sorted({str(x.dtype) for x in operands})))
    return arrays

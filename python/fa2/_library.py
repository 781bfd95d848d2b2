"""ctypes view of libfa2.so: the C structs, the prototypes, handles, and
the exception that carries fa2_last_error."""
import atexit
import ctypes
import glob
import os

# fa2_backend_t and fa2_dtype_t, as in include/fa2/fa2.h.
BACKEND_CPU, BACKEND_CUDA, BACKEND_HIP, BACKEND_KOKKOS = range(4)
DTYPE_F16, DTYPE_BF16, DTYPE_F32 = range(3)
OPTIONS_VERSION = 1
SUCCESS = 0


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int),
                ("stride_batch", ctypes.c_int64), ("stride_seq", ctypes.c_int64),
                ("stride_head", ctypes.c_int64)]


class Shape(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int64) for name in
                ("batch", "seqlen_q", "seqlen_k", "heads_q", "heads_kv", "head_dim")]


class Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("version", ctypes.c_uint32),
                ("softmax_scale", ctypes.c_float), ("causal", ctypes.c_int),
                ("window_left", ctypes.c_int), ("window_right", ctypes.c_int),
                ("cu_seqlens_q", ctypes.c_void_p), ("cu_seqlens_k", ctypes.c_void_p)]

    def __init__(self, **fields):
        super().__init__(ctypes.sizeof(Options), OPTIONS_VERSION, 0.0, 0, -1, -1, None, None)
        for name, value in fields.items():
            setattr(self, name, value)


class Fa2Error(RuntimeError):
    """A call that libfa2 refused or that failed; `status` is the fa2_status_t
    value, `status_name` its string, and the message is fa2_last_error."""

    def __init__(self, status, status_name, detail):
        super().__init__(detail or status_name)
        self.status = status
        self.status_name = status_name


def _preference(lib):
    """More backends first; among equals, one that holds the CPU backend."""
    built = []
    for backend in range(4):
        flag = ctypes.c_int(0)
        lib.fa2_backend_built(backend, ctypes.byref(flag))
        built.append(flag.value)
    return sum(built), built[BACKEND_CPU]


def _load():
    """$FA2_LIBRARY, else libfa2.so next to this package, else the build of
    this checkout (build/*/libfa2.so) holding the most backends (the CPU one
    among them, if any), the newest among equals."""
    if os.environ.get("FA2_LIBRARY"):
        return ctypes.CDLL(os.path.abspath(os.environ["FA2_LIBRARY"]))
    here = os.path.dirname(os.path.abspath(__file__))
    beside = os.path.join(here, "libfa2.so")
    if os.path.exists(beside):
        return ctypes.CDLL(beside)
    pattern = os.path.join(here, "..", "..", "build", "*", "libfa2.so")
    builds = sorted(glob.glob(pattern), key=os.path.getmtime, reverse=True)
    if not builds:
        raise OSError("libfa2.so not found (FA2_LIBRARY unset, none in %s or %s); "
                      "build it with CMake or set FA2_LIBRARY" % (here, pattern))
    libraries = [ctypes.CDLL(os.path.abspath(path)) for path in builds]
    return max(libraries, key=_preference)  # max keeps the first (newest) of equals


def _declare(lib):
    P = ctypes.POINTER
    c_int, c_void_p, c_size_t = ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t
    prototypes = {
        "fa2_get_version": (c_int, [P(c_int)]),
        "fa2_status_string": (ctypes.c_char_p, [c_int]),
        "fa2_backend_name": (ctypes.c_char_p, [c_int]),
        "fa2_backend_built": (c_int, [c_int, P(c_int)]),
        "fa2_create": (c_int, [P(c_void_p), c_int, c_int]),
        "fa2_destroy": (c_int, [c_void_p]),
        "fa2_last_error": (ctypes.c_char_p, [c_void_p]),
        "fa2_fwd_workspace_size": (c_int, [c_void_p, P(Shape), c_int, P(Options), P(c_size_t)]),
        "fa2_bwd_workspace_size": (c_int, [c_void_p, P(Shape), c_int, P(Options), P(c_size_t)]),
        "fa2_fwd": (c_int, [c_void_p, P(Shape), P(Tensor), P(Tensor), P(Tensor), P(Tensor),
                            c_void_p, P(Options), c_void_p, c_size_t, c_void_p]),
        "fa2_bwd": (c_int, [c_void_p, P(Shape), P(Tensor), P(Tensor), P(Tensor), P(Tensor),
                            P(Tensor), c_void_p, P(Tensor), P(Tensor), P(Tensor), P(Options),
                            c_void_p, c_size_t, c_void_p]),
    }
    for name, (restype, argtypes) in prototypes.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    return lib


_lib = None
_handles = {}


def lib():
    """The loaded library (loaded on first use, so importing fa2 never fails)."""
    global _lib
    if _lib is None:
        _lib = _declare(_load())
    return _lib


def status_string(status):
    return lib().fa2_status_string(status).decode()


def backend_name(backend):
    return lib().fa2_backend_name(backend).decode()


def backend_built(backend):
    built = ctypes.c_int(0)
    lib().fa2_backend_built(backend, ctypes.byref(built))
    return bool(built.value)


def version():
    """FA2_VERSION_CODE of the loaded library."""
    code = ctypes.c_int(0)
    lib().fa2_get_version(ctypes.byref(code))
    return code.value


def handle(backend, device):
    """One handle per (backend, device), created on first use."""
    key = (backend, device)
    if key not in _handles:
        raw = ctypes.c_void_p()
        status = lib().fa2_create(ctypes.byref(raw), backend, device)
        if status != SUCCESS:
            raise Fa2Error(status, status_string(status),
                           "%s: cannot create a %s handle on device %d"
                           % (status_string(status), backend_name(backend), device))
        _handles[key] = raw
    return _handles[key]


def check(status, raw_handle):
    """Raises Fa2Error with the handle's last error unless status is success."""
    if status != SUCCESS:
        raise Fa2Error(status, status_string(status),
                       lib().fa2_last_error(raw_handle).decode())


@atexit.register
def _destroy_handles():
    for raw in _handles.values():
        _lib.fa2_destroy(raw)
    _handles.clear()

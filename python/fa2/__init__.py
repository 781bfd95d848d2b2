"""fa2: exact FlashAttention-2 on every vendor's GPU and on the CPU, with
FlashAttention-2's Python interface. The library is libfa2.so from the CMake
build, found through $FA2_LIBRARY, next to this package, or in the newest
build/*/ of this checkout."""
from ._library import (BACKEND_CPU, BACKEND_CUDA, BACKEND_HIP, BACKEND_KOKKOS, Fa2Error,
                       backend_built, backend_name, version)
from .interface import (flash_attn_backward, flash_attn_func, flash_attn_kvpacked_func,
                        flash_attn_qkvpacked_func, flash_attn_varlen_func,
                        flash_attn_varlen_kvpacked_func, flash_attn_varlen_qkvpacked_func)

__all__ = [
    "BACKEND_CPU", "BACKEND_CUDA", "BACKEND_HIP", "BACKEND_KOKKOS", "Fa2Error", "backend_built",
    "backend_name", "version", "flash_attn_backward", "flash_attn_func", "flash_attn_kvpacked_func",
    "flash_attn_qkvpacked_func", "flash_attn_varlen_func", "flash_attn_varlen_kvpacked_func",
    "flash_attn_varlen_qkvpacked_func",
]

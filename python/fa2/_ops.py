"""The two calls into libfa2, on any array type _frameworks supports."""
import ctypes
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from . import _library as L
from ._frameworks import arrays_of


@dataclass(frozen=True)
class Attention:
    """Everything but the operands: the mask, the scale, varlen offsets."""
    softmax_scale: Optional[float] = None  # None: 1/sqrt(head_dim)
    causal: bool = False
    window_size: Tuple[int, int] = (-1, -1)
    cu_seqlens_q: Any = None  # int32 offsets (batch + 1), or None
    cu_seqlens_k: Any = None
    max_seqlen_q: Optional[int] = None
    max_seqlen_k: Optional[int] = None
    deterministic: bool = False  # of the backward; the forward always is

    @property
    def varlen(self):
        return self.cu_seqlens_q is not None or self.cu_seqlens_k is not None


def _new_options(a):
    left, right = a.window_size
    return L.Options(softmax_scale=float(a.softmax_scale or 0.0), causal=int(bool(a.causal)),
                     window_left=int(left), window_right=int(right))


_plain_options = {}  # Attention (not varlen) -> its Options


class _Call:
    """One call's C arguments, built from q, k, v and the Attention."""

    def __init__(self, attention, q, k, v, *others):
        self.arrays = arrays_of(q, k, v, *others)
        self.dtype = self.arrays.fa2_dtype(q)
        self.handle = L.handle(self.arrays.backend, self.arrays.device)
        self.options, self.keep = self._options(attention, q)
        self.shape = self._shape(attention, q, k, v)

    def _options(self, a, q):
        if not a.varlen:  # one struct per Attention, shared by its calls (never written to)
            options = _plain_options.get(a)
            if options is None:
                if len(_plain_options) >= 64:
                    _plain_options.clear()
                options = _plain_options[a] = _new_options(a)
            return options, []
        if a.cu_seqlens_q is None or a.cu_seqlens_k is None or a.max_seqlen_q is None \
                or a.max_seqlen_k is None:
            raise ValueError("varlen needs cu_seqlens_q, cu_seqlens_k, max_seqlen_q and max_seqlen_k")
        options = _new_options(a)
        keep = [self.arrays.int32(a.cu_seqlens_q, q), self.arrays.int32(a.cu_seqlens_k, q)]
        options.cu_seqlens_q, options.cu_seqlens_k = (self.arrays.pointer(c) for c in keep)
        return options, keep  # keep: the offsets must outlive the call

    def _shape(self, a, q, k, v):
        if a.varlen:
            rank = 3
            batch = len(self.keep[0]) - 1
            if len(self.keep[1]) - 1 != batch:
                raise ValueError("cu_seqlens_q and cu_seqlens_k have different batch sizes")
        else:
            rank = 4
            batch = q.shape[0]
        if q.ndim != rank or k.ndim != rank or v.ndim != rank:
            raise ValueError("q, k, v must be %s; got shapes %s, %s, %s" % (
                "[total_tokens, heads, head_dim]" if a.varlen else "[batch, seqlen, heads, head_dim]",
                tuple(q.shape), tuple(k.shape), tuple(v.shape)))
        if tuple(k.shape) != tuple(v.shape) or k.shape[-1] != q.shape[-1] or \
                (not a.varlen and k.shape[0] != batch):
            raise ValueError("k and v must have q's batch and head_dim and one shape; got q %s, k %s, v %s"
                             % (tuple(q.shape), tuple(k.shape), tuple(v.shape)))
        if a.varlen:
            seqlen_q, seqlen_k = a.max_seqlen_q, a.max_seqlen_k
        else:
            seqlen_q, seqlen_k = q.shape[1], k.shape[1]
        return L.Shape(batch, seqlen_q, seqlen_k, q.shape[-2], k.shape[-2], q.shape[-1])

    def tensor(self, x):
        """x as an fa2_tensor_t; every operand has the call's dtype (arrays_of)."""
        strides = self.arrays.strides(x)
        if self.keep:  # varlen: packed [total, heads, dim]
            return L.Tensor(self.arrays.pointer(x), self.dtype, 0, strides[0], strides[1])
        return L.Tensor(self.arrays.pointer(x), self.dtype, strides[0], strides[1], strides[2])

    def workspace(self, size_function, like):
        """(buffer, bytes); no buffer where the call needs none."""
        nbytes = ctypes.c_size_t(0)
        L.check(size_function(self.handle, ctypes.byref(self.shape), self.dtype,
                              ctypes.byref(self.options), ctypes.byref(nbytes)), self.handle)
        if nbytes.value == 0:
            return None, 0
        return self.arrays.workspace(nbytes.value, like), nbytes.value

    def lse(self, like):
        """Varlen leaves the entries past each sequence's length: zero them."""
        s = self.shape
        return self.arrays.float32((s.batch, s.heads_q, s.seqlen_q), like,
                                   zeroed=self.options.cu_seqlens_q is not None)


def pointer_or_null(call, buffer):
    return None if buffer is None else call.arrays.pointer(buffer)


def forward(attention, q, k, v):
    """(out, softmax_lse); lse is float32 [batch, heads_q, seqlen_q] (max_seqlen_q for varlen)."""
    call = _Call(attention, q, k, v)
    q, k, v = (call.arrays.last_dim_contiguous(x) for x in (q, k, v))
    out = call.arrays.empty(tuple(q.shape), q)
    lse = call.lse(q)
    workspace, nbytes = call.workspace(L.lib().fa2_fwd_workspace_size, q)
    r = ctypes.byref
    L.check(L.lib().fa2_fwd(call.handle, r(call.shape), r(call.tensor(q)), r(call.tensor(k)),
                            r(call.tensor(v)), r(call.tensor(out)), call.arrays.pointer(lse),
                            r(call.options), pointer_or_null(call, workspace), nbytes, call.arrays.stream),
            call.handle)
    return out, lse


def backward(attention, dout, q, k, v, out, lse):
    """(dq, dk, dv), each shaped like its operand."""
    call = _Call(attention, q, k, v, dout, out)
    if attention.deterministic and call.arrays.backend != L.BACKEND_CPU:
        raise NotImplementedError("fa2's GPU backward sums dQ with atomics, so it is not deterministic: "
                                  "call with deterministic=False (the CPU backend always is)")
    dout, q, k, v, out = (call.arrays.last_dim_contiguous(x) for x in (dout, q, k, v, out))
    if tuple(dout.shape) != tuple(q.shape) or tuple(out.shape) != tuple(q.shape):
        raise ValueError("dout and out must be shaped like q %s; got %s and %s"
                         % (tuple(q.shape), tuple(dout.shape), tuple(out.shape)))
    expected_lse = (call.shape.batch, call.shape.heads_q, call.shape.seqlen_q)
    if tuple(lse.shape) != expected_lse or not call.arrays.is_float32(lse):
        raise ValueError("softmax_lse must be float32 %s, got %s %s" % (expected_lse, lse.dtype, tuple(lse.shape)))
    lse = call.arrays.contiguous(lse)
    dq, dk, dv = (call.arrays.empty(tuple(x.shape), x) for x in (q, k, v))
    workspace, nbytes = call.workspace(L.lib().fa2_bwd_workspace_size, q)
    r = ctypes.byref
    L.check(L.lib().fa2_bwd(call.handle, r(call.shape), r(call.tensor(dout)), r(call.tensor(q)),
                            r(call.tensor(k)), r(call.tensor(v)), r(call.tensor(out)),
                            call.arrays.pointer(lse), r(call.tensor(dq)), r(call.tensor(dk)),
                            r(call.tensor(dv)), r(call.options), pointer_or_null(call, workspace), nbytes,
                            call.arrays.stream),
            call.handle)
    return dq, dk, dv

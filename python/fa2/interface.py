"""FlashAttention-2's Python interface (flash_attn.flash_attn_interface),
same names, arguments and semantics, on libfa2.

Differences, all explicit: dropout, ALiBi and softcapping raise
NotImplementedError; return_attn_probs gives (out, softmax_lse, None) since
the attention matrix is never formed; softmax_lse is float32
[batch, heads, seqlen_q] (for varlen: [batch, heads, max_seqlen_q], zero
past each sequence's length); deterministic=True is honoured on the CPU
backend and refused (NotImplementedError) by a GPU backward. Autograd works
on PyTorch tensors; NumPy callers take gradients with flash_attn_backward."""
import sys

from . import _ops
from ._ops import Attention


def _refuse_unsupported(dropout_p, softcap, alibi_slopes):
    if dropout_p:
        raise NotImplementedError("fa2 has no dropout: call with dropout_p=0.0")
    if softcap:
        raise NotImplementedError("fa2 has no softcapping: call with softcap=0.0")
    if alibi_slopes is not None:
        raise NotImplementedError("fa2 has no ALiBi: call with alibi_slopes=None")


def _autograd_wanted(*operands):
    torch = sys.modules.get("torch")
    return torch is not None and torch.is_grad_enabled() and any(
        isinstance(x, torch.Tensor) and x.requires_grad for x in operands)


_function = None


def _autograd_function():
    """torch.autograd.Function over fa2's forward and backward, built on first
    use so that fa2 imports without PyTorch."""
    global _function
    if _function is None:
        import torch

        class FlashAttention(torch.autograd.Function):
            # lse is an output only when the caller asks for it: autograd
            # then keeps no record of a second output (host time a call).
            @staticmethod
            def forward(ctx, q, k, v, attention, with_lse):
                out, lse = _ops.forward(attention, q, k, v)
                ctx.save_for_backward(q, k, v, out, lse)
                ctx.attention = attention
                if not with_lse:
                    return out
                ctx.mark_non_differentiable(lse)
                return out, lse

            @staticmethod
            def backward(ctx, dout, *_dlse):
                q, k, v, out, lse = ctx.saved_tensors
                dq, dk, dv = _ops.backward(ctx.attention, dout, q, k, v, out, lse)
                return dq, dk, dv, None, None

        _function = FlashAttention
    return _function


def _attend(q, k, v, attention, dropout_p, softcap, alibi_slopes, return_attn_probs):
    _refuse_unsupported(dropout_p, softcap, alibi_slopes)
    if not _autograd_wanted(q, k, v):
        out, lse = _ops.forward(attention, q, k, v)
    elif return_attn_probs:
        out, lse = _autograd_function().apply(q, k, v, attention, True)
    else:
        return _autograd_function().apply(q, k, v, attention, False)
    return (out, lse, None) if return_attn_probs else out


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                    softcap=0.0, alibi_slopes=None, deterministic=False, return_attn_probs=False):
    """q: [batch, seqlen_q, heads, head_dim]; k, v: [batch, seqlen_k, heads_kv, head_dim]
    with heads % heads_kv == 0. deterministic=True holds on the CPU backend;
    on a GPU the backward raises NotImplementedError (dQ sums with atomics)."""
    attention = Attention(softmax_scale, causal, tuple(window_size), deterministic=bool(deterministic))
    return _attend(q, k, v, attention, dropout_p, softcap, alibi_slopes, return_attn_probs)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                           dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                           softcap=0.0, alibi_slopes=None, deterministic=False,
                           return_attn_probs=False, block_table=None):
    """q: [total_q, heads, head_dim], k, v: [total_k, heads_kv, head_dim];
    cu_seqlens_*: int32 [batch + 1] offsets."""
    if block_table is not None:
        raise NotImplementedError("fa2 has no paged KV cache: call with block_table=None")
    attention = Attention(softmax_scale, causal, tuple(window_size), cu_seqlens_q, cu_seqlens_k,
                          int(max_seqlen_q), int(max_seqlen_k), bool(deterministic))
    return _attend(q, k, v, attention, dropout_p, softcap, alibi_slopes, return_attn_probs)


def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None, causal=False,
                              window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                              deterministic=False, return_attn_probs=False):
    """qkv: [batch, seqlen, 3, heads, head_dim]; read in place through strides."""
    return flash_attn_func(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], dropout_p, softmax_scale, causal,
                           window_size, softcap, alibi_slopes, deterministic, return_attn_probs)


def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None, causal=False,
                             window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                             deterministic=False, return_attn_probs=False):
    """kv: [batch, seqlen_k, 2, heads_kv, head_dim]."""
    return flash_attn_func(q, kv[:, :, 0], kv[:, :, 1], dropout_p, softmax_scale, causal,
                           window_size, softcap, alibi_slopes, deterministic, return_attn_probs)


def flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_seqlen, dropout_p=0.0, softmax_scale=None,
                                     causal=False, window_size=(-1, -1), softcap=0.0,
                                     alibi_slopes=None, deterministic=False, return_attn_probs=False):
    """qkv: [total, 3, heads, head_dim]."""
    return flash_attn_varlen_func(qkv[:, 0], qkv[:, 1], qkv[:, 2], cu_seqlens, cu_seqlens, max_seqlen,
                                  max_seqlen, dropout_p, softmax_scale, causal, window_size, softcap,
                                  alibi_slopes, deterministic, return_attn_probs)


def flash_attn_varlen_kvpacked_func(q, kv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                    dropout_p=0.0, softmax_scale=None, causal=False,
                                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                                    deterministic=False, return_attn_probs=False):
    """kv: [total_k, 2, heads_kv, head_dim]."""
    return flash_attn_varlen_func(q, kv[:, 0], kv[:, 1], cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                  max_seqlen_k, dropout_p, softmax_scale, causal, window_size, softcap,
                                  alibi_slopes, deterministic, return_attn_probs)


def flash_attn_backward(dout, q, k, v, out, softmax_lse, softmax_scale=None, causal=False,
                        window_size=(-1, -1), cu_seqlens_q=None, cu_seqlens_k=None,
                        max_seqlen_q=None, max_seqlen_k=None, deterministic=False):
    """(dq, dk, dv) of the attention that flash_attn_func (or the varlen one,
    with the same offsets) computed as out, softmax_lse: for NumPy callers,
    and for tensors outside autograd."""
    attention = Attention(softmax_scale, causal, tuple(window_size), cu_seqlens_q, cu_seqlens_k,
                          max_seqlen_q, max_seqlen_k, bool(deterministic))
    return _ops.backward(attention, dout, q, k, v, out, softmax_lse)

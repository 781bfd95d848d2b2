"""fa2's Python interface on NumPy arrays (the CPU backend) against the
float64 reference, forward and backward."""
import pytest

np = pytest.importorskip("numpy", reason="NumPy is not installed")

import fa2  # noqa: E402
from reference import BFLOAT16, assert_close, assert_lse_close, attention  # noqa: E402
from rule import GRADIENT_FACTOR  # noqa: E402

DTYPES = [np.float32, np.float16] + ([BFLOAT16] if BFLOAT16 is not None else [])


def randn(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def operands(seed, dtype, batch=2, seqlen_q=37, seqlen_k=53, heads_q=4, heads_kv=2, head_dim=32):
    rng = np.random.default_rng(seed)
    return (randn(rng, (batch, seqlen_q, heads_q, head_dim), dtype),
            randn(rng, (batch, seqlen_k, heads_kv, head_dim), dtype),
            randn(rng, (batch, seqlen_k, heads_kv, head_dim), dtype),
            randn(rng, (batch, seqlen_q, heads_q, head_dim), dtype))


def check_against_reference(q, k, v, dout, out, lse, grads, **mask):
    exact = attention(q, k, v, dout, **mask)
    naive = attention(q, k, v, dout, storage=q.dtype, **mask)
    assert_close(out, exact[0], naive[0], q.dtype, "out")
    assert_lse_close(lse, exact[1])
    for name, got, e, n in zip(("dq", "dk", "dv"), grads, exact[2], naive[2]):
        assert got.shape == e.shape and got.dtype == q.dtype
        assert_close(got, e, n, q.dtype, name, GRADIENT_FACTOR)


MASKS = [dict(), dict(causal=True), dict(window=(7, 3)), dict(causal=True, window=(5, -1))]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mask", MASKS, ids=str)
@pytest.mark.parametrize("seqlens", [(37, 53), (64, 64), (61, 17), (1, 9)])
def test_forward_and_backward(dtype, mask, seqlens):
    q, k, v, dout = operands(1, dtype, seqlen_q=seqlens[0], seqlen_k=seqlens[1])
    window = mask.get("window", (-1, -1))
    out, lse, probs = fa2.flash_attn_func(q, k, v, causal=mask.get("causal", False),
                                          window_size=window, return_attn_probs=True)
    assert probs is None and out.shape == q.shape and lse.shape == (2, 4, seqlens[0])
    grads = fa2.flash_attn_backward(dout, q, k, v, out, lse, causal=mask.get("causal", False),
                                    window_size=window)
    check_against_reference(q, k, v, dout, out, lse, grads, **mask)


def test_softmax_scale_and_mqa():
    q, k, v, dout = operands(2, np.float32, heads_q=6, heads_kv=1, head_dim=64)
    out, lse, _ = fa2.flash_attn_func(q, k, v, softmax_scale=0.3, return_attn_probs=True)
    grads = fa2.flash_attn_backward(dout, q, k, v, out, lse, softmax_scale=0.3)
    check_against_reference(q, k, v, dout, out, lse, grads, scale=0.3)


def test_strided_operands_read_in_place():
    q, k, v, dout = operands(3, np.float32)
    # Heads-major storage seen as [batch, seqlen, heads, head_dim]: no copy needed.
    q_strided = np.ascontiguousarray(q.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
    assert np.array_equal(fa2.flash_attn_func(q_strided, k, v), fa2.flash_attn_func(q, k, v))
    # A head_dim that is not contiguous is copied first.
    q_columns = np.asfortranarray(q)
    assert np.array_equal(fa2.flash_attn_func(q_columns, k, v), fa2.flash_attn_func(q, k, v))


def test_packed_variants_match_separate_operands():
    rng = np.random.default_rng(4)
    qkv = randn(rng, (2, 40, 3, 4, 32), np.float32)
    expected = fa2.flash_attn_func(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], causal=True)
    assert np.array_equal(fa2.flash_attn_qkvpacked_func(qkv, causal=True), expected)
    kv = np.ascontiguousarray(qkv[:, :, 1:])
    assert np.array_equal(fa2.flash_attn_kvpacked_func(qkv[:, :, 0], kv, causal=True), expected)


def varlen_operands(seed, lengths_q, lengths_k, dtype=np.float32, heads_q=4, heads_kv=2, head_dim=32):
    rng = np.random.default_rng(seed)
    cu_q = np.concatenate([[0], np.cumsum(lengths_q)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(lengths_k)]).astype(np.int32)
    q = randn(rng, (cu_q[-1], heads_q, head_dim), dtype)
    k = randn(rng, (cu_k[-1], heads_kv, head_dim), dtype)
    v = randn(rng, (cu_k[-1], heads_kv, head_dim), dtype)
    dout = randn(rng, q.shape, dtype)
    return q, k, v, dout, cu_q, cu_k


@pytest.mark.parametrize("causal", [False, True])
def test_varlen_with_empty_and_single_token_sequences(causal):
    lengths_q, lengths_k = [5, 0, 1, 33, 12], [9, 4, 1, 33, 0]
    q, k, v, dout, cu_q, cu_k = varlen_operands(5, lengths_q, lengths_k)
    out, lse, _ = fa2.flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(lengths_q), max(lengths_k),
                                             causal=causal, return_attn_probs=True)
    assert lse.shape == (5, 4, max(lengths_q))
    dq, dk, dv = fa2.flash_attn_backward(dout, q, k, v, out, lse, causal=causal, cu_seqlens_q=cu_q,
                                         cu_seqlens_k=cu_k, max_seqlen_q=max(lengths_q),
                                         max_seqlen_k=max(lengths_k))
    for b in range(5):
        sq, sk = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        one = [x[None] for x in (q[sq], k[sk], v[sk], dout[sq])]
        grads = (dq[sq][None], dk[sk][None], dv[sk][None])
        check_against_reference(*one, out[sq][None], lse[b:b + 1, :, :lengths_q[b]], grads,
                                causal=causal)


def test_varlen_packed_variants():
    lengths = [7, 20, 3]
    q, k, v, _, cu, _ = varlen_operands(6, lengths, lengths, heads_kv=4)
    expected = fa2.flash_attn_varlen_func(q, k, v, cu, cu, 20, 20, causal=True)
    qkv = np.stack([q, k, v], axis=1)
    assert np.array_equal(fa2.flash_attn_varlen_qkvpacked_func(qkv, cu, 20, causal=True), expected)
    kv = np.stack([k, v], axis=1)
    assert np.array_equal(fa2.flash_attn_varlen_kvpacked_func(q, kv, cu, cu, 20, 20, causal=True),
                          expected)


def test_deterministic_backward_on_the_cpu():
    q, k, v, dout = operands(7, np.float32)
    out, lse, _ = fa2.flash_attn_func(q, k, v, deterministic=True, return_attn_probs=True)
    first = fa2.flash_attn_backward(dout, q, k, v, out, lse, deterministic=True)
    second = fa2.flash_attn_backward(dout, q, k, v, out, lse, deterministic=True)
    assert all(np.array_equal(a, b) for a, b in zip(first, second))

"""Attention in NumPy, the slow and obvious way: in float64 for the
reference, and rounded like a framework in low precision for the error rule
(rule.py)."""
import numpy as np

from rule import FORWARD_FACTOR, LSE_TOLERANCE, tolerance

try:
    import ml_dtypes
    BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    BFLOAT16 = None



def visible(seqlen_q, seqlen_k, causal, window):
    """[seqlen_q, seqlen_k] mask, bottom-right aligned like FlashAttention-2."""
    left, right = window
    if causal:
        right = 0
    i = np.arange(seqlen_q)[:, None] + (seqlen_k - seqlen_q)
    j = np.arange(seqlen_k)[None, :]
    mask = np.ones((seqlen_q, seqlen_k), dtype=bool)
    if left >= 0:
        mask &= j >= i - left
    if right >= 0:
        mask &= j <= i + right
    return mask


def attention(q, k, v, dout=None, scale=None, causal=False, window=(-1, -1), storage=None):
    """out [b, s, h, d], lse [b, h, s] and, given dout, (dq, dk, dv) for
    [batch, seqlen, heads, head_dim] operands. storage=None computes in
    float64; a dtype computes in float32 and rounds each stage to it."""
    compute = np.float64 if storage is None else np.float32

    def r(x):
        return x.astype(compute) if storage is None else x.astype(storage).astype(compute)

    q, k, v = (x.astype(compute) for x in (q, k, v))
    group = q.shape[2] // k.shape[2]
    k, v = (np.repeat(x, group, axis=2) for x in (k, v))
    scale = compute(scale if scale is not None else q.shape[-1] ** -0.5)
    mask = visible(q.shape[1], k.shape[1], causal, window)
    scores = np.where(mask, r(np.einsum("bihd,bjhd->bhij", q, k) * scale), -np.inf)
    row_max = scores.max(axis=-1, keepdims=True, initial=-np.inf)
    seen = np.isfinite(row_max)
    exp = np.exp(scores - np.where(seen, row_max, 0))
    total = exp.sum(axis=-1, keepdims=True)
    prob = r(exp / np.where(seen, total, 1))
    out = r(np.einsum("bhij,bjhd->bihd", prob, v))
    lse = np.where(seen, row_max + np.log(np.where(seen, total, 1)), -np.inf)[..., 0]
    if dout is None:
        return out, lse
    dout = dout.astype(compute)
    dprob = r(np.einsum("bihd,bjhd->bhij", dout, v))
    delta = np.einsum("bihd,bihd->bhi", dout, out)[..., None]
    dscore = r(prob * (dprob - delta))
    dq = r(np.einsum("bhij,bjhd->bihd", dscore, k) * scale)
    dk = np.einsum("bhij,bihd->bjhd", dscore, q) * scale
    dv = np.einsum("bhij,bihd->bjhd", prob, dout)
    b, s, h, d = dk.shape
    dk, dv = (r(x.reshape(b, s, h // group, group, d).sum(axis=3)) for x in (dk, dv))
    return out, lse, (dq, dk, dv)


def assert_close(result, exact, naive, storage, what, factor=FORWARD_FACTOR):
    """The error rule for out and the gradients (naive: the low-precision one)."""
    result, exact, naive = (np.asarray(x, dtype=np.float64) for x in (result, exact, naive))
    error = np.abs(result - exact).max(initial=0)
    naive_error = np.abs(naive - exact).max(initial=0)
    allowed = tolerance(naive_error, np.abs(exact).max(initial=0), np.dtype(storage).name, factor)
    assert error <= allowed, "%s: max error %.3e > tolerance %.3e (naive %.3e)" % (
        what, error, allowed, naive_error)


def assert_lse_close(result, exact):
    """lse against float64, -inf exactly where a row sees no key."""
    result, exact = np.asarray(result, dtype=np.float64), np.asarray(exact, dtype=np.float64)
    empty = np.isneginf(exact)
    assert np.array_equal(np.isneginf(result), empty), "lse: -inf rows differ"
    error = np.abs(result[~empty] - exact[~empty])
    assert np.all(error <= LSE_TOLERANCE * np.maximum(1.0, np.abs(exact[~empty]))), \
        "lse: max error %.3e" % error.max(initial=0)

"""What the interface refuses, and how: unsupported features raise
NotImplementedError, bad arguments raise fa2.Fa2Error carrying libfa2's
status and its explanation (or TypeError / ValueError for what Python
catches before the call)."""
import pytest

np = pytest.importorskip("numpy", reason="NumPy is not installed")

import fa2  # noqa: E402


@pytest.fixture
def qkv():
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal((1, 16, 2, 32)).astype(np.float32) for _ in range(3))


@pytest.mark.parametrize("unsupported", [dict(dropout_p=0.1), dict(softcap=30.0),
                                         dict(alibi_slopes=np.ones(2, np.float32))], ids=str)
def test_unsupported_features_raise_not_implemented(qkv, unsupported):
    with pytest.raises(NotImplementedError):
        fa2.flash_attn_func(*qkv, **unsupported)


def test_paged_kv_raises_not_implemented(qkv):
    q = qkv[0][0]
    cu = np.array([0, 16], np.int32)
    with pytest.raises(NotImplementedError):
        fa2.flash_attn_varlen_func(q, q, q, cu, cu, 16, 16, block_table=np.zeros((1, 1), np.int32))


def raises_fa2(status_name, match, call):
    with pytest.raises(fa2.Fa2Error, match=match) as info:
        call()
    assert info.value.status_name == status_name
    assert isinstance(info.value.status, int) and info.value.status > 0
    return info.value


def test_bad_window(qkv):
    raises_fa2("invalid argument", "window", lambda: fa2.flash_attn_func(*qkv, window_size=(-7, 0)))


def test_bad_scale(qkv):
    raises_fa2("invalid argument", "softmax_scale",
               lambda: fa2.flash_attn_func(*qkv, softmax_scale=float("nan")))


def test_heads_not_a_multiple(qkv):
    q = np.zeros((1, 16, 3, 32), np.float32) + 1
    raises_fa2("shape mismatch", "heads", lambda: fa2.flash_attn_func(q, qkv[1], qkv[2]))


def test_unsupported_head_dim():
    x = np.ones((1, 4, 1, 1024), np.float32)
    raises_fa2("unsupported head dim", "head_dim", lambda: fa2.flash_attn_func(x, x, x))


def test_bad_cu_seqlens(qkv):
    q = qkv[0][0]
    bad = np.array([1, 16], np.int32)
    raises_fa2("invalid argument", "cu_seqlens_q",
               lambda: fa2.flash_attn_varlen_func(q, q, q, bad, np.array([0, 16], np.int32), 16, 16))


def test_negative_strides(qkv):
    q = qkv[0][:, ::-1]
    raises_fa2("bad stride", "stride", lambda: fa2.flash_attn_func(q, qkv[1], qkv[2]))


def test_python_level_refusals(qkv):
    q, k, v = qkv
    with pytest.raises(TypeError, match="float64"):
        fa2.flash_attn_func(q.astype(np.float64), k, v)
    with pytest.raises(TypeError, match="dtypes"):
        fa2.flash_attn_func(q.astype(np.float16), k, v)
    with pytest.raises(ValueError, match="shape"):
        fa2.flash_attn_func(q, k[:, :8], v)
    with pytest.raises(ValueError):
        fa2.flash_attn_func(q[0], k[0], v[0])
    with pytest.raises(TypeError):
        fa2.flash_attn_func(q.tolist(), k, v)

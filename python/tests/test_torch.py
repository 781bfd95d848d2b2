"""fa2 on PyTorch tensors (CPU, and CUDA/ROCm when present): forward and
autograd gradients against torch's scaled_dot_product_attention (math
backend) in float64, with the conformance suite's rule: the error may be 2x
(forward) / 3x (gradients) that of the same SDPA in the low precision."""
import functools
import itertools

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (the torch tests are optional)")
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import fa2  # noqa: E402
from rule import FORWARD_FACTOR, GRADIENT_FACTOR, tolerance  # noqa: E402

HAVE_GPU = torch.cuda.is_available()
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not HAVE_GPU, reason="no CUDA/ROCm device visible to PyTorch"))]


def visible(seqlen_q, seqlen_k, causal, window, device):
    """[seqlen_q, seqlen_k] bool mask, bottom-right aligned like FlashAttention-2."""
    left, right = window
    right = 0 if causal else right
    i = torch.arange(seqlen_q, device=device)[:, None] + (seqlen_k - seqlen_q)
    j = torch.arange(seqlen_k, device=device)[None, :]
    mask = torch.ones(seqlen_q, seqlen_k, dtype=torch.bool, device=device)
    if left >= 0:
        mask &= j >= i - left
    if right >= 0:
        mask &= j <= i + right
    return mask


def dtypes_of(device):
    return [torch.float32, torch.bfloat16] if device == "cpu" else [torch.float16, torch.bfloat16]


def sdpa(q, k, v, causal, window, scale):
    """SDPA on [batch, seqlen, heads, head_dim] with FlashAttention-2's
    bottom-right mask and GQA spelled out."""
    group = q.shape[2] // k.shape[2]
    k, v = (x.repeat_interleave(group, dim=2) for x in (k, v))
    mask = visible(q.shape[1], k.shape[1], causal, window, q.device)
    with sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                             attn_mask=mask, scale=scale)
    return out.transpose(1, 2)


def leaf(x, dtype):
    return x.detach().to(dtype).requires_grad_(True)


def run(function, q, k, v, dout):
    """out and (dq, dk, dv) of one implementation through autograd."""
    out = function(q, k, v)
    out.backward(dout)
    return out.detach(), tuple(x.grad for x in (q, k, v))


def assert_rule(result, exact, naive, factor, what):
    dtype_name = str(result.dtype).replace("torch.", "")
    result, exact, naive = (x.double() for x in (result, exact, naive))
    error = (result - exact).abs().max().item()
    naive_error = (naive - exact).abs().max().item()
    allowed = tolerance(naive_error, exact.abs().max().item(), dtype_name, factor)
    assert error <= allowed, "%s: max error %.3e > %.3e (naive %.3e)" % (what, error, allowed, naive_error)


CASES = [  # (batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim, causal, window)
    (2, 128, 128, 4, 4, 64, False, (-1, -1)),
    (2, 128, 128, 4, 2, 128, True, (-1, -1)),
    (1, 100, 260, 4, 1, 64, True, (-1, -1)),
    (2, 200, 200, 2, 2, 128, False, (32, 0)),
    (2, 1, 3000, 8, 2, 128, True, (-1, -1)),  # decoding: one query row, a long KV cache
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_forward_and_gradients_against_sdpa(device, case):
    batch, sq, sk, hq, hkv, d, causal, window = case
    gen = torch.Generator().manual_seed(sq * 7 + d)
    q = torch.randn(batch, sq, hq, d, generator=gen).to(device)
    k = torch.randn(batch, sk, hkv, d, generator=gen).to(device)
    v = torch.randn(batch, sk, hkv, d, generator=gen).to(device)
    dout = torch.randn(batch, sq, hq, d, generator=gen).to(device)
    scale = d ** -0.5
    reference = functools.partial(sdpa, causal=causal, window=window, scale=scale)
    for dtype in dtypes_of(device):
        # Every implementation starts from the same dtype-rounded inputs.
        rounded = [x.to(dtype) for x in (q, k, v, dout)]
        exact = run(reference, *(leaf(x, torch.float64) for x in rounded[:3]), rounded[3].double())
        naive = run(reference, *(leaf(x, dtype) for x in rounded[:3]), rounded[3])
        ours = run(lambda *x: fa2.flash_attn_func(*x, causal=causal, window_size=window),
                   *(leaf(x, dtype) for x in rounded[:3]), rounded[3])
        assert ours[0].dtype == dtype and ours[0].device == q.device
        assert_rule(ours[0], exact[0], naive[0], FORWARD_FACTOR, "out %s" % dtype)
        for name, got, e, n in zip(("dq", "dk", "dv"), ours[1], exact[1], naive[1]):
            assert_rule(got, e, n, GRADIENT_FACTOR, "%s %s" % (name, dtype))


@pytest.mark.parametrize("device", DEVICES)
def test_lse_and_packed_autograd(device):
    dtype = dtypes_of(device)[-1]
    gen = torch.Generator().manual_seed(0)
    qkv = torch.randn(2, 96, 3, 4, 64, generator=gen).to(device=device, dtype=dtype).requires_grad_(True)
    out, lse, probs = fa2.flash_attn_qkvpacked_func(qkv, causal=True, return_attn_probs=True)
    assert probs is None and lse.dtype == torch.float32 and lse.shape == (2, 4, 96)
    q, k, v = (qkv[:, :, i].double() for i in range(3))
    scores = torch.einsum("bihd,bjhd->bhij", q, k) * 64 ** -0.5
    scores = scores.masked_fill(~visible(96, 96, True, (-1, -1), device), float("-inf"))
    assert torch.allclose(lse.double(), torch.logsumexp(scores, dim=-1), rtol=1e-3, atol=1e-3)
    out.float().square().sum().backward()
    assert qkv.grad is not None and qkv.grad.shape == qkv.shape and torch.isfinite(qkv.grad).all()
    # Without lse the autograd function has one output: the same gradients
    # (up to the order of the GPU's dQ atomics).
    with_lse, qkv.grad = qkv.grad, None
    fa2.flash_attn_qkvpacked_func(qkv, causal=True).float().square().sum().backward()
    assert torch.allclose(qkv.grad, with_lse, rtol=2e-2, atol=2e-2)


@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA/ROCm device visible to PyTorch")
def test_runs_on_the_current_stream():
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(4, 512, 8, 128, generator=gen).to("cuda", torch.bfloat16) for _ in range(3))
    expected = fa2.flash_attn_func(q, k, v, causal=True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        got = fa2.flash_attn_func(q, k, v, causal=True)
    torch.cuda.current_stream().wait_stream(side)
    assert torch.equal(got, expected)


@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA/ROCm device visible to PyTorch")
def test_varlen_on_gpu_matches_per_sequence_calls():
    lengths = [1, 77, 0, 256]
    gen = torch.Generator().manual_seed(2)
    total = sum(lengths)
    q, k, v = (torch.randn(total, 4, 64, generator=gen).to("cuda", torch.float16) for _ in range(3))
    cu = torch.tensor([0] + list(itertools.accumulate(lengths)), dtype=torch.int32, device="cuda")
    out = fa2.flash_attn_varlen_func(q, k, v, cu, cu, max(lengths), max(lengths), causal=True)
    for b, n in enumerate(lengths):
        if n == 0:
            continue
        s = slice(int(cu[b]), int(cu[b + 1]))
        single = fa2.flash_attn_func(q[s][None], k[s][None], v[s][None], causal=True)[0]
        assert torch.allclose(out[s].float(), single.float(), atol=2e-3, rtol=0)


def test_status_errors_carry_the_library_message():
    q = torch.randn(1, 8, 3, 32)
    k = torch.randn(1, 8, 2, 32)
    with pytest.raises(fa2.Fa2Error, match="heads_q = 3"):
        fa2.flash_attn_func(q, k, k)
    with pytest.raises(NotImplementedError):
        fa2.flash_attn_func(q, q, q, dropout_p=0.5)


@pytest.mark.skipif(not HAVE_GPU, reason="no CUDA/ROCm device visible to PyTorch")
def test_deterministic_gpu_backward_is_refused():
    q = torch.randn(1, 64, 2, 64, device="cuda", dtype=torch.float16, requires_grad=True)
    out = fa2.flash_attn_func(q, q, q, deterministic=True)  # the forward is deterministic
    with pytest.raises(NotImplementedError, match="deterministic"):
        out.sum().backward()

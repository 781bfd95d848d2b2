"""Host time of one call (microseconds), fa2's Python package against SDPA's
cudnn and flash backends, at a shape whose GPU time is far below it (bf16,
batch 1, 128 tokens, 16 heads, d64): forward outside autograd, forward with
autograd recording, and the backward through autograd. Then the side-by-side
harness's own timing (triton's do_bench) of three 512-token forwards, with
and without autograd, where a slow host shows as GPU time. Run on the GPU
machine:
    FA2_LIBRARY=build/.../libfa2.so python3 bench/host_cost.py [PACKAGE_DIR]
PACKAGE_DIR (default: this checkout's python/) holds the fa2 package, so that
two versions of it can be compared on one library."""
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(HERE, "..", "python"))
import fa2  # noqa: E402

PEERS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}


def host_us(fn, calls=2000):
    """Mean host time of fn over `calls` calls, queued without waiting."""
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def attend(impl, q, k, v, causal=False):
    """fa2 on [b, s, h, d], a peer (with its sdpa_kernel context, as the harness) on [b, h, s, d]."""
    if impl == "fa2":
        return fa2.flash_attn_func(q, k, v, causal=causal)
    with sdpa_kernel([PEERS[impl]]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def operands(impl, b, s, h, d, grad):
    shape = (b, s, h, d) if impl == "fa2" else (b, h, s, d)
    q, k, v, dout = (torch.randn(shape, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    if grad:
        q, k, v = (x.requires_grad_(True) for x in (q, k, v))
    return q, k, v, dout


def main():
    print("package:", fa2.__file__)
    print("%-6s %12s %12s %10s   (host us a call)" % ("impl", "fwd no-grad", "fwd autograd", "bwd"))
    for impl in ("fa2", *PEERS):
        q, k, v, _ = operands(impl, 1, 128, 16, 64, grad=False)
        with torch.no_grad():
            plain = host_us(lambda: attend(impl, q, k, v))
        q, k, v, dout = operands(impl, 1, 128, 16, 64, grad=True)
        recorded = host_us(lambda: attend(impl, q, k, v))
        out = attend(impl, q, k, v)
        backward = host_us(lambda: out.backward(dout, retain_graph=True))
        print("%-6s %12.1f %12.1f %10.1f" % (impl, plain, recorded, backward))
    from triton.testing import do_bench
    print("do_bench, 512 tokens, batch 32, hidden 2048 (us):")
    for d, causal in ((64, True), (128, False), (128, True)):
        line = []
        for impl in ("fa2", "cudnn"):
            q, k, v, _ = operands(impl, 32, 512, 2048 // d, d, grad=True)
            line.append("%s %.1f" % (impl, 1e3 * do_bench(lambda: attend(impl, q, k, v, causal),
                                                          warmup=10, rep=40, return_mode="median")))
            if impl == "fa2":
                with torch.no_grad():
                    line.append("(no autograd %.1f)" % (1e3 * do_bench(
                        lambda: attend(impl, q, k, v, causal), warmup=10, rep=40, return_mode="median")))
        print("  d%d causal=%d: %s" % (d, causal, ", ".join(line)))


if __name__ == "__main__":
    main()

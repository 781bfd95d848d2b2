"""Kernel-by-kernel GPU time of one backward call, fa2 against SDPA's
backends (torch.profiler), called as bench/sdpa_side_by_side.py calls them:
bf16, 16k tokens, hidden 2048. Run on the GPU machine:
    FA2_LIBRARY=build/.../libfa2.so python3 bench/kernel_breakdown.py \
        [--shapes 128:2048:0,64:8192:0] [--peers cudnn,flash]
(--shapes: head_dim:seqlen:causal.) The side kernels (D, dQ conversion,
memsets) are what ncu of the main kernel alone does not show."""
import argparse
import os
import sys

import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import fa2
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import profile, ProfilerActivity

def run(impl, d, s, causal, reps=10):
    b, h = 16384 // s, 2048 // d
    base = [torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(4)]
    if impl == "fa2":
        q, k, v = [x.transpose(1, 2).contiguous().requires_grad_(True) for x in base[:3]]
        dout = base[3].transpose(1, 2).contiguous()
        out = fa2.flash_attn_func(q, k, v, causal=causal)
    else:
        q, k, v = [x.clone().requires_grad_(True) for x in base[:3]]
        dout = base[3]
        backend = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
                   "efficient": SDPBackend.EFFICIENT_ATTENTION}[impl]
        with sdpa_kernel([backend]):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    for _ in range(5):
        q.grad = k.grad = v.grad = None
        out.backward(dout, retain_graph=True)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            q.grad = k.grad = v.grad = None
            out.backward(dout, retain_graph=True)
        torch.cuda.synchronize()
    total = 0.0
    rows = []
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if t <= 0: continue
        rows.append((t / reps, e.count // reps, e.key[:90]))
    rows.sort(reverse=True)
    for t, c, name in rows:
        if t < 1: continue
        total += t
        print(f"  {impl:9s} d{d} s{s} c{int(causal)} {t:8.1f} us x{c} {name}")
    print(f"  {impl:9s} d{d} s{s} c{int(causal)} total {total:.1f} us")

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="128:2048:0,128:512:0,64:2048:0,128:2048:1")
    parser.add_argument("--peers", default="cudnn")
    args = parser.parse_args()
    for shape in args.shapes.split(","):
        d, s, c = (int(x) for x in shape.split(":"))
        for impl in ["fa2"] + args.peers.split(","):
            run(impl, d, s, bool(c))

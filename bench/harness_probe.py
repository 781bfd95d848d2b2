"""Times one attention forward several ways, to tell a harness effect from a
clock effect: CUDA events over 10 and over 100 launches, triton's do_bench
with a short and a long run, on randn and on uniform inputs, for fa2 and
PyTorch SDPA's cuDNN backend. Run `nvidia-smi --query-gpu=clocks.sm,power.draw,
clocks_throttle_reasons.active --format=csv -lms 250` beside it to see the
clock and the throttle reason (bench/RESULTS.md, 2026-11-29 16:38).

    FA2_LIBRARY=build/cuda-sm90/libfa2.so python3 bench/harness_probe.py
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import fa2  # noqa: E402


def event_median_ms(fn, launches):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(launches):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def main():
    b, h, s, d = 1, 16, 16384, 128
    flops = 4 * b * h * s * s * d
    draws = {"randn": lambda: torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16),
             "uniform": lambda: (torch.rand(b, h, s, d, device="cuda") * 2 - 1).to(torch.bfloat16)}
    for name, draw in draws.items():
        q_sdpa, k_sdpa, v_sdpa = draw(), draw(), draw()
        q, k, v = (x.transpose(1, 2).contiguous() for x in (q_sdpa, k_sdpa, v_sdpa))
        impls = {"fa2": lambda: fa2.flash_attn_func(q, k, v),
                 "cudnn": lambda: F.scaled_dot_product_attention(q_sdpa, k_sdpa, v_sdpa)}
        for impl, fn in impls.items():
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]), torch.no_grad():
                ms = {"events10": event_median_ms(fn, 10),
                      "do_bench40": do_bench(fn, warmup=10, rep=40, return_mode="median"),
                      "do_bench400": do_bench(fn, warmup=200, rep=400, return_mode="median"),
                      "events100": event_median_ms(fn, 100)}
            print(f"{name:8s} {impl:6s} " +
                  "  ".join(f"{k} {flops / v * 1e-9:6.1f}" for k, v in ms.items()) + " TF/s", flush=True)


if __name__ == "__main__":
    main()

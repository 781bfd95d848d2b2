"""Where a decoding step's time goes, fa2 against SDPA's cudnn and flash, at
the decode grid's shapes (bench/sdpa_side_by_side.py --decode: one query
token, 32 query / 8 KV heads, d128, bf16): the host time of one call (queued
without waiting), the GPU time of its kernels by name (torch.profiler), and
the latency as the side-by-side harness times it (do_bench) and inside a
CUDA graph (do_bench_cudagraph, where the host no longer counts). Run on the
GPU machine:
    FA2_LIBRARY=build/.../libfa2.so python3 bench/decode_probe.py [BATCH:KV ...]"""
import collections
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile
from triton.testing import do_bench, do_bench_cudagraph

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import fa2  # noqa: E402
from host_cost import host_us  # noqa: E402 (this folder is on sys.path when run as a script)

HEADS_Q, HEADS_KV, HEAD_DIM = 32, 8, 128
PEERS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}


def step_of(impl, batch, kv):
    """A no-argument decoding step of `impl` on fresh operands in its layout."""
    q = torch.randn(batch, HEADS_Q, 1, HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(batch, HEADS_KV, kv, HEAD_DIM, device="cuda", dtype=torch.bfloat16)
            for _ in range(2))
    if impl == "fa2":
        q, k, v = (x.transpose(1, 2).contiguous() for x in (q, k, v))
        return lambda: fa2.flash_attn_func(q, k, v)

    def step():
        with sdpa_kernel([PEERS[impl]]):
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    return step


def kernels_us(step, calls=20):
    """Mean GPU time a call of each kernel the step launches."""
    step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            step()
        torch.cuda.synchronize()
    per_kernel = collections.defaultdict(float)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            per_kernel[event.name[:60]] += event.device_time / calls
    return dict(per_kernel)


def main():
    shapes = [tuple(int(x) for x in arg.split(":")) for arg in sys.argv[1:]] or [
        (1, 1024), (1, 4096), (1, 16384), (1, 65536), (8, 1024), (32, 1024)]
    print("%5s %7s %-6s %8s %9s %9s %9s   kernels (GPU us a call)" % (
        "batch", "kv", "impl", "host us", "do_bench", "graph", "gpu sum"))
    for batch, kv in shapes:
        for impl in ("fa2", *PEERS):
            step = step_of(impl, batch, kv)
            host = host_us(step)
            bench = 1e3 * do_bench(step, warmup=25, rep=100, return_mode="median")
            try:
                graph = "%9.1f" % (1e3 * do_bench_cudagraph(step, rep=100, return_mode="median"))
            except Exception as e:  # noqa: BLE001 - report and go on
                graph = "%9s" % ("n/a: " + type(e).__name__)[:9]
            kernels = kernels_us(step)
            listing = ", ".join("%s %.1f" % (name, us) for name, us in sorted(kernels.items()))
            print("%5d %7d %-6s %8.1f %9.1f %s %9.1f   %s" % (
                batch, kv, impl, host, bench, graph, sum(kernels.values()), listing), flush=True)
            del step
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Which kernels each implementation launches for one forward + backward,
with their launch configuration (grid, block, registers a thread, shared
memory) and GPU time, from torch.profiler: a peer's tile shape and
persistence read off its kernel name and grid before any profiling. Same
shapes, layouts and calls as bench/sdpa_side_by_side.py, bf16:

    FA2_LIBRARY=build/cuda-sm90/libfa2.so python3 bench/kernel_configs.py \\
        --shapes 64:2048:0,256:512:0 --impls fa2,fa2_sm80,flash,cudnn

--shapes: head_dim:seqlen:causal, batch = tokens / seqlen, heads = hidden / head_dim."""
import argparse
import json
import os
import sys
import tempfile

import power_probe
import sdpa_side_by_side as side

SIDE_KERNELS = ("elementwise_kernel", "direct_copy")  # PyTorch's copies and adds, not attention


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    power_probe.add_grid_arguments(p, "64:2048:0,128:2048:0,256:512:0")
    args = p.parse_args(argv)
    power_probe.parse_shapes(p, args)
    return args


def main(argv=None):
    args = parse_args(argv)
    import torch
    from torch.profiler import ProfilerActivity, profile
    for d, s, causal, base in power_probe.grid_inputs(torch, args):
        for impl in args.impls:
            if impl == "fa2_sm80":
                os.environ["FA2_CUDA_PATH"] = "sm80"
            layout = [x.transpose(1, 2).contiguous() for x in base] if impl.startswith("fa2") else base
            q, k, v = [x.clone().requires_grad_(True) for x in layout[:3]]
            attend = side.attention_functions(torch, impl)
            for _ in range(2):  # the second pass is profiled: no first-call setup in it
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    attend(q, k, v, bool(causal)).backward(layout[3])
                    torch.cuda.synchronize()
            os.environ.pop("FA2_CUDA_PATH", None)
            with tempfile.NamedTemporaryFile(suffix=".json") as trace:
                prof.export_chrome_trace(trace.name)
                events = json.load(open(trace.name))["traceEvents"]
            for e in events:
                if e.get("cat") != "kernel" or any(x in e["name"] for x in SIDE_KERNELS):
                    continue
                a = e.get("args", {})
                print(f"d{d} s{s} c{causal} {impl:9s} {e['dur']:9.1f} us  grid {a.get('grid')}"
                      f"  block {a.get('block')}  regs {a.get('registers per thread')}"
                      f"  smem {a.get('shared memory')}  {e['name'][:160]}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

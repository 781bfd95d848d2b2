#!/usr/bin/env python3
"""Throughput under the GPU's power cap: each implementation runs alone,
back to back, for --seconds (forward, or with --modes bwd the backward
as the side by side times it: out.backward(dout) with the input gradients
cleared between calls), while nvidia-smi samples the SM clock,
board power and throttle reasons every 100 ms. Prints TF/s, the mean clock
and power after the first third (the ramp), TF/s per GHz (work per clock:
what the kernel does with the cycles it gets) and GFLOP/J (what decides
the clock once the cap is reached), and do_bench's short-run median beside
them. Same shapes and layouts as bench/sdpa_side_by_side.py (its
attention_functions), bf16 unless --dtype fp16:

    FA2_LIBRARY=build/cuda-sm90/libfa2.so python3 bench/power_probe.py \\
        --shapes 128:4096:0,64:2048:0 --impls fa2,fa2_sm80,flash,cudnn --modes fwd,bwd

--shapes: head_dim:seqlen:causal, batch = tokens / seqlen, heads = hidden / head_dim."""
import argparse
import os
import subprocess
import sys
import threading
import time

import sdpa_side_by_side as side


def sample_gpu(stop, samples):
    query = "--query-gpu=clocks.sm,power.draw,clocks_throttle_reasons.active"
    while not stop.is_set():
        try:
            out = subprocess.run(["nvidia-smi", query, "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True).stdout
        except OSError:  # no nvidia-smi
            return
        fields = [x.strip() for x in out.strip().split(",")]
        if len(fields) == 3:
            samples.append((float(fields[0]), float(fields[1]), fields[2]))
        time.sleep(0.1)


def sustained(torch, fn, seconds):
    """ms a call over `seconds` of back-to-back calls, and the GPU samples
    taken meanwhile (without the first third)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    samples, stop = [], threading.Event()
    sampler = threading.Thread(target=sample_gpu, args=(stop, samples))
    sampler.start()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    calls, began = 0, time.time()
    start.record()
    while time.time() - began < seconds:
        for _ in range(10):
            fn()
        calls += 10
        torch.cuda.synchronize()
    end.record()
    end.synchronize()
    stop.set()
    sampler.join()
    return start.elapsed_time(end) / calls, samples[len(samples) // 3:] or samples


def add_grid_arguments(parser, default_shapes):
    """--shapes, --impls, --tokens, --hidden: the probes' common arguments."""
    parser.add_argument("--shapes", default=default_shapes)
    parser.add_argument("--impls", default=["fa2", "fa2_sm80", "flash", "cudnn"],
                        type=side.name_list(side.IMPLEMENTATIONS + side.OPTIONAL_IMPLEMENTATIONS))
    parser.add_argument("--tokens", type=int, default=16384)
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--dtype", choices=side.DTYPES, default="bf16")


def parse_shapes(parser, args):
    """args.shapes (head_dim:seqlen:causal,...) as tuples; a shape the grid
    cannot hold is a parser error (exit 2)."""
    try:
        shapes = [tuple(int(x) for x in shape.split(":")) for shape in args.shapes.split(",")]
    except ValueError:
        parser.error("--shapes takes head_dim:seqlen:causal,...")
    for shape in shapes:
        if (len(shape) != 3 or shape[0] <= 0 or shape[1] <= 0 or args.hidden % shape[0]
                or args.tokens % shape[1] or shape[2] not in (0, 1)):
            parser.error("bad shape %s: head_dim:seqlen:causal, dividing --hidden and --tokens" %
                         ":".join(map(str, shape)))
    args.shapes = shapes


def grid_inputs(torch, args):
    """Per shape: d, seqlen, causal and four randn tensors of --dtype (q,
    k, v, dout) in SDPA's layout [b, h, s, d]."""
    dtype = side.torch_dtype(torch, args.dtype)
    for d, s, causal in args.shapes:
        b, h = args.tokens // s, args.hidden // d
        yield d, s, causal, [torch.randn(b, h, s, d, device="cuda", dtype=dtype)
                             for _ in range(4)]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_grid_arguments(p, "128:4096:0,128:2048:0,64:2048:0,128:4096:1")
    p.add_argument("--modes", type=side.name_list(side.MODES), default=["fwd"])
    p.add_argument("--seconds", type=float, default=4.0)
    args = p.parse_args(argv)
    parse_shapes(p, args)
    if args.seconds <= 0:
        p.error("--seconds must be positive")
    return args


def main(argv=None):
    args = parse_args(argv)
    import torch
    from triton.testing import do_bench
    for d, s, causal, base in grid_inputs(torch, args):
        b, h = args.tokens // s, args.hidden // d
        layouts = {"sdpa": base, "fa2": [x.transpose(1, 2).contiguous() for x in base]}
        for mode in args.modes:
            flops = side.fwd_flops(b, h, s, d, bool(causal)) * (2.5 if mode == "bwd" else 1.0)
            for impl in args.impls:
                if impl == "fa2_sm80":
                    os.environ["FA2_CUDA_PATH"] = "sm80"
                attend = side.attention_functions(torch, impl)
                q, k, v, dout = layouts["fa2" if impl.startswith("fa2") else "sdpa"]
                if mode == "fwd":
                    def fn():
                        with torch.no_grad():
                            return attend(q, k, v, bool(causal))
                    grads = None
                else:
                    grads = [x.clone().requires_grad_(True) for x in (q, k, v)]
                    out = attend(*grads, bool(causal))

                    def fn():
                        for x in grads:
                            x.grad = None
                        out.backward(dout, retain_graph=True)
                ms, samples = sustained(torch, fn, args.seconds)
                short_ms = do_bench(fn, warmup=10, rep=40, return_mode="median")
                os.environ.pop("FA2_CUDA_PATH", None)
                del grads
                report(mode, d, s, causal, impl, flops, ms, short_ms, samples)


def report(mode, d, s, causal, impl, flops, ms, short_ms, samples):
    tflops = flops / ms * 1e-9
    if not samples:  # no nvidia-smi reading: the speed alone
        samples = [(float("nan"), float("nan"), "n/a")]
    clock = sum(x[0] for x in samples) / len(samples)
    power = sum(x[1] for x in samples) / len(samples)
    throttle = ",".join(sorted({x[2] for x in samples}))
    print(f"{mode} d{d} s{s} c{causal} {impl:9s} sustained {tflops:6.1f} TF/s  clock {clock:5.0f} MHz"
          f"  power {power:4.0f} W  TF/s per GHz {tflops / clock * 1000:6.1f}"
          f"  GFLOP/J {tflops * 1000 / power:6.1f}  throttle {throttle}"
          f"  do_bench {flops / short_ms * 1e-9:6.1f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

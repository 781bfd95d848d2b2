#!/usr/bin/env python3
"""fa2 next to PyTorch SDPA's flash (FlashAttention-2), cudnn and efficient
(xformers/CUTLASS) backends, in one process on one GPU, on the
FlashAttention-2 paper's grid: `tokens` tokens in total and hidden size
`hidden`, so batch = tokens / seqlen and heads = hidden / head_dim.

Same shapes and the same randn values for every implementation (each in
its own preferred layout: fa2 [b, s, h, d], SDPA [b, h, s, d]); timing with
triton.testing.do_bench (median) when Triton is present, else CUDA events
(median after warm-up); --rounds N times every implementation N times per
shape, in rotated orders, and keeps the median round (the clock under the
H200's power cap drifts). FLOPs: forward 4 b h s^2 d (halved when causal),
backward 2.5x forward; fwd+bwd = 3.5x forward over the sum of the times.
A peer that fails on a shape is reported n/a; the run goes on.

    python3 bench/sdpa_side_by_side.py --dtypes bf16 --head-dims 128 --seqlens 2048,16384
writes sdpa_side_by_side_<dtypes>.json to --out (default: $OUT, else .), prints the
table, and with --plot draws the charts (bench/plot_results.py).

--decode runs the decode grid of ../shared/anchors/decode_anchors.py instead:
one query token per sequence against a KV cache (32 query heads, 8 KV heads,
head dim 128 or --decode-head-dim, bf16), latency and KV bytes read per
second, to sdpa_decode.json; --decode-queries N gives each sequence N query
tokens (drafted tokens of speculative decoding, no mask: SDPA's causal mask
is top-left aligned, fa2's bottom-right)."""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
IMPLEMENTATIONS = ("fa2", "flash", "cudnn", "efficient")
# Opt-in: fa2_sm80 is fa2 with FA2_CUDA_PATH=sm80 (our sm80 kernels on a
# Hopper GPU); fa2_bhsd is fa2 reading SDPA's own [b, h, s, d] tensors in
# place through strides, the peers' memory layout.
OPTIONAL_IMPLEMENTATIONS = ("fa2_sm80", "fa2_bhsd")
DTYPES = ("bf16", "fp16")
MODES = ("fwd", "bwd")


def torch_dtype(torch, name):
    """The torch dtype of a DTYPES name."""
    return {"bf16": torch.bfloat16, "fp16": torch.float16}[name]


def int_list(text):
    return [int(x) for x in text.split(",") if x]


def name_list(allowed):
    def parse(text):
        names = [x for x in text.split(",") if x]
        unknown = sorted(set(names) - set(allowed))
        if unknown or not names:
            raise argparse.ArgumentTypeError("choose from %s (got %s)" % (",".join(allowed), text))
        return names
    return parse


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtypes", type=name_list(DTYPES), default=list(DTYPES))
    p.add_argument("--head-dims", type=int_list, default=[64, 128, 256])
    p.add_argument("--causal", type=int_list, default=[0, 1], help="0,1")
    p.add_argument("--seqlens", type=int_list, default=[512, 1024, 2048, 4096, 8192, 16384])
    p.add_argument("--modes", type=name_list(MODES), default=list(MODES),
                   help="fwd,bwd (fwd+bwd is reported when both run)")
    p.add_argument("--impls", type=name_list(IMPLEMENTATIONS + OPTIONAL_IMPLEMENTATIONS),
                   default=list(IMPLEMENTATIONS))
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--warmup", type=int, default=25, help="ms of warm-up (do_bench)")
    p.add_argument("--rep", type=int, default=100, help="ms of timed runs (do_bench)")
    p.add_argument("--rounds", type=int, default=1,
                   help="time every implementation this often per shape, in rotated orders, "
                        "and report the median round")
    p.add_argument("--out", default=os.environ.get("OUT", "."), help="folder for the JSON (and PNGs)")
    p.add_argument("--plot", action="store_true", help="also draw the PNG charts into --out")
    p.add_argument("--decode", action="store_true", help="the decode grid instead of the paper's")
    p.add_argument("--decode-head-dim", type=int, default=128,
                   help="the decode grid's head dim (the anchors' is 128)")
    p.add_argument("--decode-queries", type=int, default=1,
                   help="query tokens a sequence in the decode grid (the anchors' is 1)")
    args = p.parse_args(argv)
    for s in args.seqlens:
        if s <= 0 or args.tokens % s:
            p.error("seqlen %d does not divide --tokens %d" % (s, args.tokens))
    for d in args.head_dims:
        if d <= 0 or args.hidden % d:
            p.error("head dim %d does not divide --hidden %d" % (d, args.hidden))
    if any(c not in (0, 1) for c in args.causal):
        p.error("--causal takes 0 and/or 1")
    return args


def shapes(args):
    """(dtype, head_dim, causal, seqlen, batch, heads) in the order of the anchors."""
    for dtype in args.dtypes:
        for d in args.head_dims:
            for causal in args.causal:
                for s in args.seqlens:
                    yield dtype, d, bool(causal), s, args.tokens // s, args.hidden // d


def fwd_flops(b, h, s, d, causal):
    return 4.0 * b * h * s * s * d / (2 if causal else 1)


def make_row(dtype, d, causal, s, b, h, impl, fwd_ms=None, bwd_ms=None, error=None):
    """One result, in the format of ../shared/anchors/sdpa_anchors.py."""
    row = {"dtype": dtype, "d": d, "causal": causal, "s": s, "b": b, "h": h, "backend": impl}
    fl = fwd_flops(b, h, s, d, causal)
    if fwd_ms:
        row.update(fwd_ms=fwd_ms, fwd_tflops=fl / fwd_ms / 1e9)
    if bwd_ms:
        row.update(bwd_ms=bwd_ms, bwd_tflops=2.5 * fl / bwd_ms / 1e9)
    if fwd_ms and bwd_ms:
        row["fwdbwd_tflops"] = 3.5 * fl / (fwd_ms + bwd_ms) / 1e9
    if error:
        row["error"] = error
    return row


RATES = ("fwd_tflops", "bwd_tflops", "fwdbwd_tflops")


def format_table(rows):
    """TFLOP/s of every implementation and fa2's ratio to each peer."""
    lines = ["%-5s %4s %6s %6s %-10s %8s %8s %8s   %s" % (
        "dtype", "d", "causal", "seqlen", "impl", "fwd", "bwd", "fwd+bwd", "fa2 / impl (fwd bwd fwd+bwd)")]
    by_shape = {}
    for row in rows:
        by_shape.setdefault((row["dtype"], row["d"], row["causal"], row["s"]), []).append(row)
    for (dtype, d, causal, s), group in by_shape.items():
        ours = next((r for r in group if r["backend"] == "fa2"), {})
        for row in group:
            rates = " ".join("%8.1f" % row[k] if k in row else "%8s" % "n/a" for k in RATES)
            ratios = ""
            if row["backend"] != "fa2" and ours:
                ratios = " ".join("%5.2fx" % (ours[k] / row[k]) if k in ours and k in row else "  n/a "
                                  for k in RATES)
            lines.append("%-5s %4d %6d %6d %-10s %s   %s" % (dtype, d, causal, s, row["backend"], rates,
                                                          ratios))
            if "error" in row:
                lines.append("      %s: %s" % (row["backend"], row["error"]))
    return "\n".join(lines)


def write_json(path, meta, rows):
    with open(path, "w") as f:
        json.dump(dict(meta, rows=rows), f, indent=1)


class Timer:
    """Median milliseconds of a GPU callable: triton's do_bench when present,
    else CUDA events around each run after a warm-up."""

    def __init__(self, torch, warmup_ms, rep_ms):
        self.torch, self.warmup_ms, self.rep_ms = torch, warmup_ms, rep_ms
        try:
            from triton.testing import do_bench
            self.do_bench = do_bench
        except ImportError:
            self.do_bench = None

    def __call__(self, fn, grad_to_none=None):
        if self.do_bench:
            return self.do_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms, return_mode="median",
                                 grad_to_none=grad_to_none)
        cuda = self.torch.cuda
        fn()
        cuda.synchronize()
        times = []
        for i in range(10 + 50):
            for x in grad_to_none or ():
                x.grad = None
            start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            if i >= 10:
                times.append(start.elapsed_time(end))
        return statistics.median(times)


def attention_functions(torch, impl, gqa=False):
    """attend(q, k, v, causal) for one implementation on its own layout;
    gqa: fewer K/V heads than query heads."""
    if impl.startswith("fa2"):
        package_dir = os.path.join(HERE, "..", "python")
        if package_dir not in sys.path:
            sys.path.insert(0, package_dir)
        import fa2
        # fa2_sm80 / fa2_bhsd are the same call; measure_shape sets FA2_CUDA_PATH around it.
        return lambda q, k, v, causal: fa2.flash_attn_func(q, k, v, causal=causal)
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
               "efficient": SDPBackend.EFFICIENT_ATTENTION}[impl]

    extra = {"enable_gqa": True} if gqa else {}

    def attend(q, k, v, causal):
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, **extra)
    return attend


def measurement_order(impls, index):
    """The implementations in the order shape number `index` times them: rotated
    by one per shape. Under the H200's power cap the clock an implementation
    gets depends on what ran just before it; with a fixed order the first one
    (fa2) read 2-8% low at shapes where fa2 and fa2_sm80 run the same kernel
    (NOTES, 2026-11-29 18:06). Tables keep the --impls order."""
    k = index % len(impls)
    return list(impls[k:]) + list(impls[:k])


def measure_shape(torch, timer, args, index, dtype, d, causal, s, b, h):
    # SDPA's layout [b, h, s, d]; fa2 gets the same values as [b, s, h, d].
    base = [torch.randn(b, h, s, d, device="cuda", dtype=torch_dtype(torch, dtype))
            for _ in range(4)]
    layouts = {"sdpa": [x.clone().requires_grad_(True) for x in base[:3]] + [base[3]],
               "fa2": [x.transpose(1, 2).contiguous().requires_grad_(True) for x in base[:3]]
               + [base[3].transpose(1, 2).contiguous()]}
    outputs, times, errors = {}, {impl: ([], []) for impl in args.impls}, {}
    # Each round in another order (measurement_order): the clock a run gets
    # under the power cap drifts by up to 10% within seconds (H200,
    # 2026-11-30 04:10, the same kernels twice in a row), so several rounds
    # let each implementation meet the others' conditions.
    for r in range(args.rounds):
        for impl in measurement_order(args.impls, index * args.rounds + r):
            if impl in errors:
                continue
            q, k, v, dout = layouts["fa2" if impl in ("fa2", "fa2_sm80") else "sdpa"]
            leaves = [q, k, v]
            if impl == "fa2_bhsd":  # [b, s, h, d] views of SDPA's tensors
                q, k, v, dout = (x.transpose(1, 2) for x in (q, k, v, dout))
            if impl == "fa2_sm80":  # read by the library per call, forward and backward
                os.environ["FA2_CUDA_PATH"] = "sm80"
            try:
                attend = attention_functions(torch, impl)
                out = attend(q, k, v, causal)
                if impl not in outputs:
                    outputs[impl] = out.detach().transpose(1, 2) if impl.startswith("fa2") else out.detach()
                if "fwd" in args.modes:  # with autograd recording, like the anchors
                    times[impl][0].append(timer(lambda: attend(q, k, v, causal)))
                if "bwd" in args.modes:
                    times[impl][1].append(timer(lambda: out.backward(dout, retain_graph=True),
                                                grad_to_none=leaves))
            except Exception as e:  # a peer without a kernel for this shape: n/a
                errors[impl] = (str(e).splitlines() or [type(e).__name__])[0][:160]
            finally:
                os.environ.pop("FA2_CUDA_PATH", None)
    rows = {}
    for impl, (fwd, bwd) in times.items():
        fwd_ms = statistics.median(fwd) if fwd else None
        bwd_ms = statistics.median(bwd) if bwd else None
        rows[impl] = make_row(dtype, d, causal, s, b, h, impl, fwd_ms, bwd_ms, error=errors.get(impl))
    # fa2's output next to the first peer's, so a timing never hides a wrong result.
    peer = next((i for i in args.impls if not i.startswith("fa2") and i in outputs), None)
    if "fa2" in outputs and peer:
        diff = (outputs["fa2"].float() - outputs[peer].float()).abs().max().item()
        rows["fa2"]["max_abs_diff_vs_" + peer] = diff
    del base, layouts, outputs
    torch.cuda.empty_cache()
    return [rows[impl] for impl in args.impls]


DECODE_HEADS_Q, DECODE_HEADS_KV = 32, 8


def decode_shapes():
    """(batch, KV length) of the decode anchors."""
    return [(b, kv) for b in (1, 8, 32) for kv in (1024, 4096, 16384, 65536, 131072) if b * kv <= 32 * 65536]


def format_decode_table(rows):
    lines = ["%5s %7s %-10s %10s %8s   %s" % ("batch", "kv", "impl", "us", "TB/s", "fa2 / impl latency")]
    ours = {(r["b"], r["kv"]): r for r in rows if r["backend"] == "fa2" and "us" in r}
    for r in rows:
        if "us" not in r:
            lines.append("%5d %7d %-10s %s" % (r["b"], r["kv"], r["backend"], "n/a: " + r.get("error", "")))
            continue
        mine = ours.get((r["b"], r["kv"]))
        ratio = "%.2fx" % (mine["us"] / r["us"]) if mine and r["backend"] != "fa2" else ""
        lines.append("%5d %7d %-10s %10.1f %8.2f   %s" % (r["b"], r["kv"], r["backend"], r["us"], r["tbs"], ratio))
    return "\n".join(lines)


def measure_decode(torch, timer, args, b, kv):
    d = args.decode_head_dim
    q = torch.randn(b, DECODE_HEADS_Q, args.decode_queries, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, DECODE_HEADS_KV, kv, d, device="cuda", dtype=torch.bfloat16)
            for _ in range(2))
    kv_bytes = 2 * k.numel() * k.element_size()
    native = {"fa2": [x.transpose(1, 2).contiguous() for x in (q, k, v)], "sdpa": [q, k, v]}
    rows = []
    for impl in args.impls:
        row = {"b": b, "kv": kv, "backend": impl}
        try:
            attend = attention_functions(torch, impl, gqa=True)
            operands = native["fa2" if impl in ("fa2", "fa2_sm80") else "sdpa"]
            if impl == "fa2_bhsd":
                operands = [x.transpose(1, 2) for x in operands]
            ms = timer(lambda: attend(*operands, False))
            row.update(us=ms * 1e3, tbs=kv_bytes / ms / 1e9)
        except Exception as e:
            row["error"] = (str(e).splitlines() or [type(e).__name__])[0][:160]
        rows.append(row)
    del q, k, v, native
    torch.cuda.empty_cache()
    return rows


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
    except ImportError:
        sys.exit("sdpa_side_by_side: needs PyTorch (and a GPU)")
    if not torch.cuda.is_available():
        sys.exit("sdpa_side_by_side: no CUDA/ROCm device visible to PyTorch")
    timer = Timer(torch, args.warmup, args.rep)
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(), "timing": "do_bench" if timer.do_bench else "cuda events",
            "rounds": args.rounds}
    rows = []
    os.makedirs(args.out, exist_ok=True)
    if args.decode:
        # The first shape once untimed: without it a process's first one or two shapes read
        # 1.3-6x slow, for every library alike (H100, 2026-12-05; cause not looked into).
        measure_decode(torch, timer, args, *decode_shapes()[0])
        for b, kv in decode_shapes():
            rows += measure_decode(torch, timer, args, b, kv)
            print(format_decode_table(rows[-len(args.impls):]).split("\n", 1)[1], flush=True)
        path = os.path.join(args.out, "sdpa_decode.json")
        meta.update(head_dim=args.decode_head_dim, queries=args.decode_queries)
        write_json(path, meta, rows)
        print("\n" + format_decode_table(rows) + "\n\nwrote " + path)
        return
    print(format_table([]), flush=True)
    for index, shape in enumerate(shapes(args)):
        new = measure_shape(torch, timer, args, index, *shape)
        rows += new
        print(format_table(new).split("\n", 1)[1], flush=True)
    path = os.path.join(args.out, "sdpa_side_by_side_%s.json" % "_".join(args.dtypes))
    write_json(path, meta, rows)
    print("\n" + format_table(rows) + "\n\nwrote " + path)
    if args.plot:
        sys.path.insert(0, HERE)
        import plot_results
        try:
            for png in plot_results.plot_all(rows, args.out):
                print("wrote " + png)
        except ImportError as e:  # the JSON is written: plot it where matplotlib is
            print("no charts (%s): run bench/plot_results.py %s elsewhere" % (e, path))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""fa2's variable-length attention (cu_seqlens, packed [tokens, heads, d])
next to FlashAttention-2's own varlen kernel (PyTorch's
aten._flash_attention_forward / _backward, what SDPA `flash` runs for
nested tensors) and SDPA's cudnn backend on jagged nested tensors
(`cudnn_nested`), in one process.

A batch is `tokens` tokens cut into sequences of random lengths, uniform in
[mean / 2, 3 mean / 2] (the last one trimmed), the same lengths for queries
and keys; heads = hidden / head_dim. FLOPs: 4 h d l^2 per sequence (halved
when causal), backward 2.5x. Timing, rounds and orders as in
sdpa_side_by_side.py (do_bench medians; fa2_sm80 is fa2 with
FA2_CUDA_PATH=sm80). A peer that fails on a shape is reported n/a.

    python3 bench/varlen_side_by_side.py --head-dims 64,128 --mean-lens 512,2048
writes varlen_side_by_side.json to --out (default: $OUT, else .) and prints the table."""
import argparse
import itertools
import os
import random
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sdpa_side_by_side import (RATES, Timer, int_list, measurement_order, name_list,  # noqa: E402
                               torch_dtype, write_json)

IMPLEMENTATIONS = ("fa2", "fa2_sm80", "flash", "cudnn_nested")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16")
    p.add_argument("--head-dims", type=int_list, default=[64, 128, 256])
    p.add_argument("--causal", type=int_list, default=[0, 1], help="0,1")
    p.add_argument("--mean-lens", type=int_list, default=[512, 2048, 8192])
    p.add_argument("--modes", type=name_list(("fwd", "bwd")), default=["fwd", "bwd"])
    p.add_argument("--impls", type=name_list(IMPLEMENTATIONS), default=list(IMPLEMENTATIONS))
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--seed", type=int, default=0, help="of the sequence lengths")
    p.add_argument("--warmup", type=int, default=25, help="ms of warm-up (do_bench)")
    p.add_argument("--rep", type=int, default=100, help="ms of timed runs (do_bench)")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    args = p.parse_args(argv)
    for d in args.head_dims:
        if d <= 0 or args.hidden % d:
            p.error("head dim %d does not divide --hidden %d" % (d, args.hidden))
    for m in args.mean_lens:
        if m < 2 or m > args.tokens:
            p.error("mean length %d outside [2, --tokens]" % m)
    if any(c not in (0, 1) for c in args.causal):
        p.error("--causal takes 0 and/or 1")
    return args


def sequence_lengths(tokens, mean, seed):
    """Lengths uniform in [mean / 2, 3 mean / 2] summing to `tokens`."""
    rng = random.Random(seed * 1000003 + mean)
    lengths = []
    while sum(lengths) < tokens:
        lengths.append(min(rng.randint(mean // 2, 3 * mean // 2), tokens - sum(lengths)))
    return lengths


def fwd_flops(lengths, h, d, causal):
    return sum(4.0 * h * d * n * n / (2 if causal else 1) for n in lengths)


def attention_function(torch, impl, offsets, max_len):
    """attend(q, k, v, causal) -> out on packed [tokens, heads, d] operands."""
    if impl.startswith("fa2"):
        package_dir = os.path.join(HERE, "..", "python")
        if package_dir not in sys.path:
            sys.path.insert(0, package_dir)
        import fa2
        return lambda q, k, v, causal: fa2.flash_attn_varlen_func(
            q, k, v, offsets, offsets, max_len, max_len, causal=causal)
    if impl == "flash":
        def attend(q, k, v, causal):
            return torch.ops.aten._flash_attention_forward(
                q, k, v, offsets, offsets, max_len, max_len, 0.0, causal, False)[0]
        return attend
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    offsets64 = offsets.to(torch.int64)

    def attend(q, k, v, causal):  # jagged [batch, j, heads, d] seen as [batch, heads, j, d]
        nested = [torch.nested.nested_tensor_from_jagged(x, offsets64, max_seqlen=max_len)
                  .transpose(1, 2) for x in (q, k, v)]
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            out = F.scaled_dot_product_attention(*nested, is_causal=causal)
        return out.transpose(1, 2).values()
    return attend


def measure_shape(torch, timer, args, index, d, causal, mean, lengths):
    dtype = torch_dtype(torch, args.dtype)
    h, tokens = args.hidden // d, sum(lengths)
    offsets = torch.tensor([0] + list(itertools.accumulate(lengths)),
                           dtype=torch.int32, device="cuda")
    max_len = max(lengths)
    q, k, v = [torch.randn(tokens, h, d, device="cuda", dtype=dtype).requires_grad_(True)
               for _ in range(3)]
    dout = torch.randn(tokens, h, d, device="cuda", dtype=dtype)
    times, outputs, errors = {impl: ([], []) for impl in args.impls}, {}, {}
    for r in range(args.rounds):
        for impl in measurement_order(args.impls, index * args.rounds + r):
            if impl in errors:
                continue
            if impl == "fa2_sm80":
                os.environ["FA2_CUDA_PATH"] = "sm80"
            try:
                attend = attention_function(torch, impl, offsets, max_len)
                out = attend(q, k, v, causal)
                outputs.setdefault(impl, out.detach())
                if "fwd" in args.modes:
                    times[impl][0].append(timer(lambda: attend(q, k, v, causal)))
                if "bwd" in args.modes:
                    times[impl][1].append(timer(lambda: out.backward(dout, retain_graph=True),
                                                grad_to_none=[q, k, v]))
            except Exception as e:
                errors[impl] = (str(e).splitlines() or [type(e).__name__])[0][:160]
            finally:
                os.environ.pop("FA2_CUDA_PATH", None)
    flops = fwd_flops(lengths, h, d, causal)
    rows = []
    for impl in args.impls:
        fwd, bwd = times[impl]
        row = {"dtype": args.dtype, "d": d, "causal": causal, "mean_len": mean,
               "sequences": len(lengths), "max_len": max_len, "h": h, "backend": impl}
        if fwd:
            row["fwd_ms"] = statistics.median(fwd)
            row["fwd_tflops"] = flops / row["fwd_ms"] / 1e9
        if bwd:
            row["bwd_ms"] = statistics.median(bwd)
            row["bwd_tflops"] = 2.5 * flops / row["bwd_ms"] / 1e9
        if fwd and bwd:
            row["fwdbwd_tflops"] = 3.5 * flops / (row["fwd_ms"] + row["bwd_ms"]) / 1e9
        if impl in errors:
            row["error"] = errors[impl]
        if impl != "flash" and impl in outputs and "flash" in outputs:
            row["max_abs_diff_vs_flash"] = (outputs[impl].float() - outputs["flash"].float()
                                            ).abs().max().item()
        rows.append(row)
    return rows


def format_rows(rows):
    lines = ["%4s %6s %8s %5s %-9s %8s %8s %8s   %s" % (
        "d", "causal", "mean_len", "seqs", "impl", "fwd", "bwd", "fwd+bwd", "fa2 / impl (fwd bwd)")]
    ours = {}
    for row in rows:
        if row["backend"] == "fa2":
            ours[(row["d"], row["causal"], row["mean_len"])] = row
    for row in rows:
        key = (row["d"], row["causal"], row["mean_len"])
        rates = " ".join("%8.1f" % row[k] if k in row else "%8s" % "n/a" for k in RATES)
        ratio = ""
        if row["backend"] != "fa2" and key in ours:
            ratio = " ".join("%5.2fx" % (ours[key][k] / row[k]) if k in ours[key] and k in row
                             else "  n/a " for k in RATES[:2])
        diff = " diff %.1e" % row["max_abs_diff_vs_flash"] if "max_abs_diff_vs_flash" in row else ""
        lines.append("%4d %6d %8d %5d %-9s %s   %s%s" % (row["d"], row["causal"], row["mean_len"],
                                                      row["sequences"], row["backend"], rates,
                                                      ratio, diff))
        if "error" in row:
            lines.append("      %s: %s" % (row["backend"], row["error"]))
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    import torch
    timer = Timer(torch, args.warmup, args.rep)
    rows, index = [], 0
    for d in args.head_dims:
        for causal in args.causal:
            for mean in args.mean_lens:
                lengths = sequence_lengths(args.tokens, mean, args.seed)
                rows += measure_shape(torch, timer, args, index, d, bool(causal), mean, lengths)
                index += 1
    table = format_rows(rows)
    print(table)
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(), "argv": sys.argv[1:]}
    write_json(os.path.join(args.out, "varlen_side_by_side.json"), meta, rows)


if __name__ == "__main__":
    main()

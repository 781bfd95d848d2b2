#!/usr/bin/env python3
"""Bar charts in the style of the FlashAttention-2 paper's Figures 4-6: for
one dtype and one mode (fwd, bwd, fwd+bwd), one panel per head dim x
causal, seqlen on the x axis, one bar per implementation, TFLOP/s on the y
axis. Reads the JSON of sdpa_side_by_side.py, of fa2_bench (--json), or of
../shared/anchors/sdpa_anchors.py, any number of them at once; a shape an
implementation did not run is marked n/a. --markdown also writes the
numbers as Markdown tables (for bench/RESULTS.md).

    python3 bench/plot_results.py $OUT/sdpa_side_by_side_bf16.json --out bench/results"""
import argparse
import json
import os

MODES = {"fwd": ("fwd_tflops", "forward"), "bwd": ("bwd_tflops", "backward"),
         "fwdbwd": ("fwdbwd_tflops", "forward + backward")}
DTYPE_NAMES = {"f16": "fp16", "fp16": "fp16", "bf16": "bf16", "f32": "fp32", "fp32": "fp32"}


def load_rows(paths):
    """Every row of every file, dtype names unified (fa2_bench says f16, SDPA fp16)."""
    return load(paths)[0]


def load(paths):
    """(rows, one line per file saying where and how it was measured)."""
    rows, sources = [], []
    for path in paths:
        with open(path) as f:
            result = json.load(f)
        for row in result["rows"]:
            rows.append(dict(row, dtype=DTYPE_NAMES.get(row["dtype"], row["dtype"])))
        facts = ["%s %s" % (key, result[key]) for key in ("device", "torch", "cudnn", "timing", "backend")
                 if key in result]
        sources.append("%s: %s" % (os.path.basename(path), ", ".join(facts) or "no metadata"))
    return rows, sources


def implementations(rows):
    """In order of first appearance, fa2 first."""
    names = list(dict.fromkeys(r["backend"] for r in rows))
    return sorted(names, key=lambda n: n != "fa2")


def panels(rows, dtype, mode):
    """{(d, causal): {impl: {seqlen: TFLOP/s}}} of one dtype and mode; a
    shape without a number is absent."""
    key = MODES[mode][0]
    out = {}
    for r in rows:
        if r["dtype"] != dtype:
            continue
        cell = out.setdefault((r["d"], bool(r["causal"])), {}).setdefault(r["backend"], {})
        if r.get(key) is not None:
            cell[r["s"]] = r[key]
    return out


def plot(rows, dtype, mode, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = panels(rows, dtype, mode)
    impls = implementations([r for r in rows if r["dtype"] == dtype])
    dims = sorted({d for d, _ in data})
    fig, axes = plt.subplots(len(dims), 2, figsize=(12, 3.6 * len(dims)), squeeze=False)
    width = 0.8 / max(1, len(impls))
    for row_index, d in enumerate(dims):
        for col, causal in enumerate((False, True)):
            ax = axes[row_index][col]
            ax.set_title("%s, head dim %d, %s" % (MODES[mode][1], d, "causal" if causal else "no mask"))
            series = data.get((d, causal), {})
            seqlens = sorted({s for values in series.values() for s in values} |
                             {r["s"] for r in rows if r["dtype"] == dtype and r["d"] == d
                              and bool(r["causal"]) == causal})
            for i, impl in enumerate(impls):
                values = series.get(impl, {})
                xs = [j + (i - (len(impls) - 1) / 2) * width for j in range(len(seqlens))]
                heights = [values.get(s, 0.0) for s in seqlens]
                bars = ax.bar(xs, heights, width, label=impl)
                for x, s, bar in zip(xs, seqlens, bars):
                    text = "%.0f" % values[s] if s in values else "n/a"
                    ax.annotate(text, (x, bar.get_height()), ha="center", va="bottom", fontsize=6)
            ax.set_xticks(range(len(seqlens)))
            ax.set_xticklabels(["%dk" % (s // 1024) if s >= 1024 else str(s) for s in seqlens])
            ax.set_xlabel("sequence length")
            ax.set_ylabel("TFLOP/s")
            if not series:
                ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.suptitle("Attention %s speed, %s" % (MODES[mode][1], dtype))
    fig.legend(handles, labels, loc="upper center", ncol=len(impls), bbox_to_anchor=(0.5, 0.97))
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_all(rows, out_dir, modes=tuple(MODES)):
    """One PNG per dtype and mode present; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for dtype in sorted({r["dtype"] for r in rows}):
        for mode in modes:
            if any(r.get(MODES[mode][0]) is not None for r in rows if r["dtype"] == dtype):
                written.append(plot(rows, dtype, mode, os.path.join(out_dir, "%s_%s.png" % (dtype, mode))))
    return written


def markdown(rows, sources=(), images=()):
    """The charts, then one table per dtype: TFLOP/s fwd / bwd / fwd+bwd per
    implementation and fa2's fwd+bwd ratio to each peer."""
    text = ["Measured: " + "; ".join(sources), ""] if sources else []
    text += ["![%s](%s)" % (os.path.splitext(os.path.basename(i))[0], i) for i in images]
    text += [""] if images else []
    fwdbwd = MODES["fwdbwd"][0]
    for dtype in sorted({r["dtype"] for r in rows}):
        impls = implementations([r for r in rows if r["dtype"] == dtype])
        peers = [i for i in impls if i != "fa2"] if "fa2" in impls else []
        text += ["### %s, TFLOP/s (fwd / bwd / fwd+bwd)" % dtype, "",
                 "| d | causal | seqlen | " + " | ".join(impls + ["fa2 / %s" % p for p in peers]) + " |",
                 "|---|---|---|" + "---|" * (len(impls) + len(peers))]
        cells = {}
        for r in rows:
            if r["dtype"] == dtype:
                cells[(r["d"], bool(r["causal"]), r["s"], r["backend"])] = r
        for d, causal, s in sorted({k[:3] for k in cells}):
            row = {impl: cells.get((d, causal, s, impl), {}) for impl in impls}
            entries = [" / ".join("%.0f" % row[i][k] if row[i].get(k) is not None else "n/a"
                                  for k, _ in MODES.values()) for i in impls]
            for peer in peers:
                ours, theirs = row["fa2"].get(fwdbwd), row[peer].get(fwdbwd)
                entries.append("%.2fx" % (ours / theirs) if ours and theirs else "n/a")
            text.append("| %d | %s | %d | %s |" % (d, "yes" if causal else "no", s, " | ".join(entries)))
        text.append("")
    return "\n".join(text)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("json", nargs="+", help="result files")
    p.add_argument("--out", default=".", help="folder for the PNGs")
    p.add_argument("--modes", default=",".join(MODES), help="fwd,bwd,fwdbwd")
    p.add_argument("--markdown", help="also write the charts' links and the tables to this file")
    args = p.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    unknown = set(modes) - set(MODES)
    if unknown:
        p.error("unknown mode(s) %s" % ",".join(sorted(unknown)))
    rows, sources = load(args.json)
    images = plot_all(rows, args.out, modes)
    for path in images:
        print("wrote " + path)
    if args.markdown:
        here = os.path.dirname(os.path.abspath(args.markdown))
        with open(args.markdown, "w") as f:
            f.write(markdown(rows, sources, [os.path.relpath(i, here) for i in images]))
        print("wrote " + args.markdown)


if __name__ == "__main__":
    main()

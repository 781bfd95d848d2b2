#!/usr/bin/env python3
"""The main kernel of fa2 and of PyTorch SDPA's backends side by side under
Nsight Compute: what each executes, not only how long it takes.

Four subcommands; backends/cuda/tools/profile_vs_peers.sh drives them:

    python3 bench/profile_peers.py call IMPL D SEQLEN CAUSAL MODE
        runs IMPL (fa2, fa2_sm80, flash, cudnn, efficient) on the paper-grid
        shape (16k tokens, hidden 2048, bf16): WARMUPS forward+backward
        passes, then the measured forward (MODE fwd) or backward (bwd), so
        that `ncu --launch-skip WARMUPS --launch-count 1` with the main
        kernel's name catches the measured call. (The backward launches from
        autograd's own thread: an NVTX range on this one would not cover it.)

    python3 bench/profile_peers.py compare NAME.csv ...
        prints, per kernel, the metrics that located this project's
        instruction overheads (2026-11-30: branches and uniform-pipe work
        around the sm80 backward's atomics, descriptor arithmetic around
        every HGMMA): duration, executed instructions and their classes,
        pipe utilisation, stalls per issued instruction. The CSVs are
        `ncu --import REPORT --page raw --csv`.

    python3 bench/profile_peers.py lines NAME_src.csv [--top N]
        where one kernel's warps wait: the share of stall samples per
        reason, per stretch of code between two barriers, and the N SASS
        lines with the most samples (2026-11-30: the sm80 backward's 16
        atomics in a row, 7% in lg_throttle, and the 7% its other warps
        then spent at the next barrier). The CSV is `ncu --import REPORT
        --page source --csv --print-source sass`.

    python3 bench/profile_peers.py mix NAME_src.csv ... [--top N]
        what each kernel executes by opcode, side by side, from the same
        source-page CSVs (2026-12-07: the Hopper d64 forward's producer
        retrying its try_wait ~200 times a key block, and its masked block's
        ~4.5 instructions an element against cuDNN's 2)."""
import argparse
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WARMUPS = 3
TOKENS, HIDDEN = 16384, 2048

# (label, metric): the rows of the comparison, in this order.
METRICS = (
    ("duration (ms)", "gpu__time_duration.sum"),
    ("instructions", "smsp__inst_executed.sum"),
    ("branches", "smsp__inst_executed_op_branch.sum"),
    ("ldmatrix", "smsp__inst_executed_op_ldsm.sum"),
    ("shared loads", "smsp__sass_inst_executed_op_shared_ld.sum"),
    ("shared stores", "smsp__sass_inst_executed_op_shared_st.sum"),
    ("global reductions", "smsp__inst_executed_op_global_red.sum"),
    ("cp.async", "smsp__inst_executed_op_ldgsts.sum"),
    ("registers / thread", "launch__registers_per_thread"),
    ("tensor pipe busy %", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"),
    ("issue slots busy %", "sm__inst_executed.avg.pct_of_peak_sustained_elapsed"),
    ("uniform pipe %", "sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active"),
    ("alu pipe %", "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active"),
    ("fma pipe %", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active"),
    ("lsu pipe %", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"),
    ("xu pipe (exp2) %", "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"),
    ("smem bank conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"),
    # What the work costs in data movement (energy under the power cap).
    ("shared wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"),
    ("L2 sectors read by SMs", "lts__t_sectors_srcunit_tex_op_read.sum"),
    ("L2 sectors written by SMs", "lts__t_sectors_srcunit_tex_op_write.sum"),
    ("L2 sectors reduced by SMs", "lts__t_sectors_srcunit_tex_op_red.sum"),
    ("DRAM read (MB)", "dram__bytes_read.sum"),
    ("DRAM written (MB)", "dram__bytes_write.sum"),
)
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"


def shape(d, s):
    return TOKENS // s, HIDDEN // d


def call(impl, d, s, causal, mode, dtype="bf16"):
    import torch
    sys.path.insert(0, HERE)
    import sdpa_side_by_side as side
    if impl == "fa2_sm80":  # read by the library per call
        os.environ["FA2_CUDA_PATH"] = "sm80"
    attend = side.attention_functions(torch, impl)
    b, h = shape(d, s)
    dims = (b, s, h, d) if impl.startswith("fa2") else (b, h, s, d)
    torch.manual_seed(0)
    q, k, v, dout = (torch.randn(*dims, device="cuda", dtype=side.torch_dtype(torch, dtype),
                                 requires_grad=i < 3)
                     for i in range(4))
    for _ in range(WARMUPS):
        attend(q, k, v, causal).backward(dout)
    out = attend(q, k, v, causal)
    if mode == "bwd":
        out.backward(dout)
    torch.cuda.synchronize()


# ncu picks each value's unit by its size (a 400 us kernel's duration is in
# usecond, a 9 ms one's in msecond): times are read as ms and byte counts as
# MB, the units of the table's labels.
TO_TABLE_UNITS = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3,
                  "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3,
                  "byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1.0, "Gbyte": 1e3, "Tbyte": 1e6}


def read_csv(path):
    """{kernel name: {metric: value}} of one `--page raw --csv` export."""
    rows = [r for r in csv.reader(open(path)) if r]
    header = rows[0]
    units = next((dict(zip(header, r)) for r in rows[1:]
                  if len(r) == len(header) and not r[0].isdigit()), {})
    kernels = {}
    for row in rows[1:]:
        if len(row) != len(header) or not row[0].isdigit():
            continue  # the units row, ncu's messages
        values = dict(zip(header, row))
        for metric, unit in units.items():
            value = number(values.get(metric))
            if unit in TO_TABLE_UNITS and value is not None:
                values[metric] = repr(value * TO_TABLE_UNITS[unit])
        kernels[values.get("Kernel Name", "?")] = values
    return kernels


def number(text):
    """The value of a metric cell ("1,234.5", or "3 (1; 2; ...)" for instanced ones)."""
    try:
        return float(text.split(" (")[0].replace(",", ""))
    except (ValueError, AttributeError):
        return None


def compare(paths):
    columns = []  # (label, metrics)
    for path in paths:
        label = os.path.splitext(os.path.basename(path))[0]
        for name, values in read_csv(path).items():
            columns.append(("%s: %s" % (label, name[:40]), values))
    if not columns:
        return "no kernels in %s" % ", ".join(paths)
    stalls = sorted({k for _, v in columns for k in v
                     if k.startswith(STALL_PREFIX) and k.endswith(STALL_SUFFIX)})
    rows = list(METRICS) + [("stall " + k[len(STALL_PREFIX):-len(STALL_SUFFIX)], k) for k in stalls]
    width = max(len(label) for label, _ in rows)
    lines = ["%d kernels: %s" % (len(columns), "; ".join("[%d] %s" % (i, c[0])
                                                          for i, c in enumerate(columns)))]
    lines.append("%-*s %s" % (width, "metric", " ".join("%14s" % ("[%d]" % i)
                                                         for i in range(len(columns)))))
    for label, metric in rows:
        cells = [number(values.get(metric)) for _, values in columns]
        if all(c is None for c in cells):
            continue
        if label.startswith("stall") and max(c or 0 for c in cells) < 0.05:
            continue  # stalls under 0.05 cycles an instruction anywhere: noise
        lines.append("%-*s %s" % (width, label, " ".join(
            "%14s" % ("-" if c is None else "%.4g" % c if c < 100 else "{:,.0f}".format(c))
            for c in cells)))
    return "\n".join(lines)


SAMPLES = "Warp Stall Sampling (All Samples)"


def read_source(path):
    """(kernel name, [{address, sass, samples, stalls: {reason: samples}}]) of one
    `--page source --csv --print-source sass` export (a kernel-name row, then the header)."""
    rows = [r for r in csv.reader(open(path)) if r]
    name = rows[0][1] if rows and rows[0][0] == "Kernel Name" and len(rows[0]) > 1 else "?"
    header = next((r for r in rows if "Source" in r and SAMPLES in r), None)
    if header is None:
        return name, []
    reasons = [h for h in header if h.startswith("stall_") and not h.endswith("(Not Issued)")]
    lines = []
    for row in rows[rows.index(header) + 1:]:
        if len(row) != len(header):
            continue
        values = dict(zip(header, row))
        lines.append({"address": values.get("Address", ""), "sass": values["Source"].strip(),
                      "samples": number(values[SAMPLES]) or 0.0,
                      "executed": number(values.get("Instructions Executed")) or 0.0,
                      "stalls": {r[len("stall_"):]: number(values[r]) or 0.0 for r in reasons}})
    return name, lines


def where_warps_wait(path, top=12):
    name, lines = read_source(path)
    total = sum(line["samples"] for line in lines)
    if total == 0:
        return "%s: no stall samples in %s" % (name, path)
    pct = lambda x: 100.0 * x / total
    out = ["%s: %d SASS lines, %.0f samples" % (name[:80], len(lines), total)]
    reasons = {}
    for line in lines:
        for reason, n in line["stalls"].items():
            reasons[reason] = reasons.get(reason, 0.0) + n
    out.append("by reason: " + ", ".join("%s %.1f%%" % (r, pct(n)) for r, n in
                                         sorted(reasons.items(), key=lambda x: -x[1]) if pct(n) >= 1))
    # Stretches of code that end at a barrier: the phases of a loop body.
    out.append("by stretch (first line, lines, share, top reasons):")
    stretch = None
    stretches = []
    for i, line in enumerate(lines):
        if stretch is None or line["sass"].split(" ")[0].startswith("BAR"):
            stretch = {"first": i, "lines": 0, "samples": 0.0, "stalls": {}}
            stretches.append(stretch)
        stretch["lines"] += 1
        stretch["samples"] += line["samples"]
        for reason, n in line["stalls"].items():
            stretch["stalls"][reason] = stretch["stalls"].get(reason, 0.0) + n
    for st in stretches:
        if pct(st["samples"]) >= 1:
            main_reasons = sorted(st["stalls"].items(), key=lambda x: -x[1])[:3]
            out.append("  %5d %5d %5.1f%%  %s" % (st["first"], st["lines"], pct(st["samples"]),
                                                 ", ".join("%s %.1f%%" % (r, pct(n))
                                                           for r, n in main_reasons)))
    # Lines a warp runs equally often share a count: a loop body's (blocks
    # x tiles x warps), code run once a tile, the producer's per-block loop.
    # A kernel's once-a-tile share is what its tile boundaries cost.
    out.append("by execution count (count, lines, share):")
    counts = {}
    for line in lines:
        entry = counts.setdefault(line["executed"], [0, 0.0])
        entry[0] += 1
        entry[1] += line["samples"]
    for executed, (n, samples) in sorted(counts.items(), key=lambda x: -x[1][1]):
        if pct(samples) >= 1:
            out.append("  %12.0f %5d %5.1f%%" % (executed, n, pct(samples)))
    out.append("top lines (index, share, top reason, SASS):")
    ranked = sorted(range(len(lines)), key=lambda i: -lines[i]["samples"])[:top]
    for i in ranked:
        line = lines[i]
        reason = max(line["stalls"].items(), key=lambda x: x[1], default=("-", 0.0))
        out.append("  %5d %5.2f%%  %-14s %s" % (i, pct(line["samples"]),
                                               "%s %.2f%%" % (reason[0], pct(reason[1])),
                                               line["sass"][:70]))
    return "\n".join(out)


def opcode(sass):
    """The opcode of a SASS line, without its predicate guard and modifiers."""
    words = sass.split()
    if not words:
        return "?"
    return (words[1] if words[0].startswith("@") and len(words) > 1 else words[0]).split(".")[0]


def opcode_mix(paths, top=40):
    """Executed warp instructions per opcode of each source-page CSV, in columns,
    the opcodes most executed by any kernel first, then each kernel's total."""
    mixes, names = [], []
    for path in paths:
        name, lines = read_source(path)
        mix = {}
        for line in lines:
            op = opcode(line["sass"])
            mix[op] = mix.get(op, 0.0) + line["executed"]
        mixes.append(mix)
        names.append(name)
    labels = ["[%d] %s: %s" % (i, os.path.basename(path), name[:40])
              for i, (path, name) in enumerate(zip(paths, names))]
    out = ["%d kernels: %s" % (len(paths), "; ".join(labels))]
    ops = sorted({op for mix in mixes for op in mix},
                 key=lambda op: (-max(mix.get(op, 0.0) for mix in mixes), op))
    out.append("%-12s" % "opcode" + "".join("%15s" % ("[%d]" % i) for i in range(len(paths))))
    for op in ops[:top]:
        out.append("%-12s" % op + "".join("%15s" % format(int(mix.get(op, 0.0)), ",")
                                          for mix in mixes))
    out.append("%-12s" % "total" + "".join("%15s" % format(int(sum(mix.values())), ",")
                                           for mix in mixes))
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("call", help="one implementation's measured call (run it under ncu)")
    c.add_argument("impl", choices=("fa2", "fa2_sm80", "flash", "cudnn", "efficient"))
    c.add_argument("d", type=int)
    c.add_argument("seqlen", type=int)
    c.add_argument("causal", type=int, choices=(0, 1))
    c.add_argument("mode", choices=("fwd", "bwd"))
    c.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16")
    m = sub.add_parser("compare", help="the metric table of ncu raw-page CSVs")
    m.add_argument("csv", nargs="+")
    w = sub.add_parser("lines", help="where one kernel's warps wait (ncu source-page CSV)")
    w.add_argument("csv")
    w.add_argument("--top", type=int, default=12)
    x = sub.add_parser("mix", help="executed instructions by opcode (ncu source-page CSVs)")
    x.add_argument("csv", nargs="+")
    x.add_argument("--top", type=int, default=40)
    args = p.parse_args(argv)
    if args.command == "call":
        call(args.impl, args.d, args.seqlen, bool(args.causal), args.mode, args.dtype)
    elif args.command == "compare":
        print(compare(args.csv))
    elif args.command == "mix":
        print(opcode_mix(args.csv, args.top))
    else:
        print(where_warps_wait(args.csv, args.top))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The main kernel of fa2 and of PyTorch SDPA's backends side by side under
Nsight Compute: what each executes, not only how long it takes.

Two subcommands; backends/cuda/tools/profile_vs_peers.sh drives both:

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
        `ncu --import REPORT --page raw --csv`."""
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
)
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"


def shape(d, s):
    return TOKENS // s, HIDDEN // d


def call(impl, d, s, causal, mode):
    import torch
    sys.path.insert(0, HERE)
    import sdpa_side_by_side as side
    if impl == "fa2_sm80":  # read by the library per call
        os.environ["FA2_CUDA_PATH"] = "sm80"
    attend = side.attention_functions(torch, impl)
    b, h = shape(d, s)
    dims = (b, s, h, d) if impl.startswith("fa2") else (b, h, s, d)
    torch.manual_seed(0)
    q, k, v, dout = (torch.randn(*dims, device="cuda", dtype=torch.bfloat16, requires_grad=i < 3)
                     for i in range(4))
    for _ in range(WARMUPS):
        attend(q, k, v, causal).backward(dout)
    out = attend(q, k, v, causal)
    if mode == "bwd":
        out.backward(dout)
    torch.cuda.synchronize()


def read_csv(path):
    """{kernel name: {metric: value}} of one `--page raw --csv` export."""
    rows = [r for r in csv.reader(open(path)) if r]
    header = rows[0]
    kernels = {}
    for row in rows[1:]:
        if len(row) != len(header) or not row[0].isdigit():
            continue  # the units row, ncu's messages
        values = dict(zip(header, row))
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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("call", help="one implementation's measured call (run it under ncu)")
    c.add_argument("impl", choices=("fa2", "fa2_sm80", "flash", "cudnn", "efficient"))
    c.add_argument("d", type=int)
    c.add_argument("seqlen", type=int)
    c.add_argument("causal", type=int, choices=(0, 1))
    c.add_argument("mode", choices=("fwd", "bwd"))
    m = sub.add_parser("compare", help="the metric table of ncu raw-page CSVs")
    m.add_argument("csv", nargs="+")
    args = p.parse_args(argv)
    if args.command == "call":
        call(args.impl, args.d, args.seqlen, bool(args.causal), args.mode)
    else:
        print(compare(args.csv))


if __name__ == "__main__":
    main()

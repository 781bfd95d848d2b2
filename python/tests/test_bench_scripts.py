"""The CPU-side logic of bench/sdpa_side_by_side.py, bench/plot_results.py,
bench/profile_peers.py, bench/power_probe.py, bench/kernel_configs.py and
bench/varlen_side_by_side.py
(argument parsing, grid, rates, tables, JSON, charts) on made-up numbers;
the GPU measurement itself runs on the GPU machine."""
import json
import os
import re
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import kernel_configs  # noqa: E402
import plot_results  # noqa: E402
import power_probe  # noqa: E402
import profile_peers  # noqa: E402
import sdpa_side_by_side as side  # noqa: E402
import varlen_side_by_side as varlen  # noqa: E402


def test_defaults_are_the_paper_grid():
    args = side.parse_args([])
    shapes = list(side.shapes(args))
    assert len(shapes) == 2 * 3 * 2 * 6
    assert shapes[0] == ("bf16", 64, False, 512, 32, 32)
    assert ("fp16", 256, True, 16384, 1, 8) in shapes
    assert args.impls == ["fa2", "flash", "cudnn", "efficient"]


def test_restricted_grid():
    args = side.parse_args(["--dtypes", "fp16", "--head-dims", "128", "--causal", "1",
                            "--seqlens", "2048,4096", "--modes", "fwd", "--impls", "fa2,cudnn"])
    assert list(side.shapes(args)) == [("fp16", 128, True, 2048, 8, 16), ("fp16", 128, True, 4096, 4, 16)]
    assert args.modes == ["fwd"] and args.impls == ["fa2", "cudnn"]


@pytest.mark.parametrize("bad", [["--seqlens", "3000"], ["--head-dims", "96"], ["--dtypes", "fp8"],
                                 ["--causal", "2"], ["--impls", "xformers"], ["--modes", ""]])
def test_bad_arguments_exit(bad, capsys):
    with pytest.raises(SystemExit):
        side.parse_args(bad)


def fake_rows():
    rows = []
    for causal in (False, True):
        for s in (512, 2048):
            b, h = 16384 // s, 16
            fl = side.fwd_flops(b, h, s, 128, causal)
            rows.append(side.make_row("bf16", 128, causal, s, b, h, "fa2", fl / 300e9, fl * 2.5 / 250e9))
            rows.append(side.make_row("bf16", 128, causal, s, b, h, "cudnn", fl / 600e9, fl * 2.5 / 500e9))
            rows.append(side.make_row("bf16", 128, causal, s, b, h, "efficient", error="No available kernel"))
    return rows


def test_measurement_order_rotates():
    impls = ["fa2", "fa2_sm80", "flash", "cudnn"]
    orders = [side.measurement_order(impls, i) for i in range(8)]
    assert orders[0] == impls and orders[1] == ["fa2_sm80", "flash", "cudnn", "fa2"]
    assert orders[4] == impls  # the rotation repeats every len(impls) shapes
    assert sorted(o[0] for o in orders[:4]) == sorted(impls)  # each goes first once
    assert all(sorted(o) == sorted(impls) for o in orders)


def test_rates_and_table():
    rows = fake_rows()
    assert rows[0]["fwd_tflops"] == pytest.approx(300)
    assert rows[0]["bwd_tflops"] == pytest.approx(250)
    assert rows[0]["fwdbwd_tflops"] == pytest.approx(3.5 / (1 / 300 + 1 / 100))
    table = side.format_table(rows)
    assert "0.50x" in table  # fa2 / cudnn forward
    assert "No available kernel" in table and "n/a" in table
    assert len(table.splitlines()) == 1 + len(rows) + 4  # header, rows, one error line per failed peer


def test_json_then_plots_and_markdown(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    path = tmp_path / "sdpa_side_by_side.json"
    side.write_json(str(path), {"device": "fake"}, fake_rows())
    bench_json = tmp_path / "fa2_bench.json"  # fa2_bench's format: dtype names differ
    bench_json.write_text(json.dumps({"rows": [{"backend": "fa2", "dtype": "f16", "d": 64, "causal": False,
                                                "s": 512, "fwd_tflops": 1.5, "bwd_tflops": None}]}))
    rows = plot_results.load_rows([str(path), str(bench_json)])
    assert {r["dtype"] for r in rows} == {"bf16", "fp16"}
    written = plot_results.plot_all(rows, str(tmp_path / "png"))
    assert sorted(os.path.basename(p) for p in written) == [
        "bf16_bwd.png", "bf16_fwd.png", "bf16_fwdbwd.png", "fp16_fwd.png"]
    for p in written:
        with open(p, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    table = plot_results.markdown(rows)
    assert "| 128 | yes | 2048 | 300 / 250 / 263 | 600 / 500 / 525 | n/a / n/a / n/a | 0.50x | n/a |" in table
    assert "| 64 | no | 512 | 2 / n/a / n/a |" in table


def test_plot_command_line(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    path = tmp_path / "r.json"
    side.write_json(str(path), {}, fake_rows())
    plot_results.main([str(path), "--out", str(tmp_path), "--modes", "fwd", "--markdown",
                       str(tmp_path / "t.md")])
    text = (tmp_path / "t.md").read_text()
    assert (tmp_path / "bf16_fwd.png").exists() and "![bf16_fwd](bf16_fwd.png)" in text
    assert text.startswith("Measured: r.json: no metadata") and "### bf16" in text
    with pytest.raises(SystemExit):
        plot_results.main([str(path), "--modes", "sideways"])


def test_decode_grid_and_table():
    assert side.parse_args(["--decode"]).decode
    shapes = side.decode_shapes()
    assert (1, 131072) in shapes and (32, 65536) in shapes and (32, 131072) not in shapes
    rows = [{"b": 8, "kv": 65536, "backend": "fa2", "us": 500.0, "tbs": 4.3},
            {"b": 8, "kv": 65536, "backend": "cudnn", "us": 250.0, "tbs": 8.6},
            {"b": 8, "kv": 65536, "backend": "efficient", "error": "No available kernel"}]
    table = side.format_decode_table(rows)
    assert "2.00x" in table and "n/a: No available kernel" in table


def write_ncu_raw_csv(path, kernels):
    """A `ncu --page raw --csv` export: header, units row, one row a kernel."""
    stall = "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio"
    header = ["ID", "Kernel Name", "gpu__time_duration.sum", "smsp__inst_executed.sum",
              "smsp__inst_executed_op_branch.sum", stall % "wait", stall % "misc"]
    lines = [",".join('"%s"' % h for h in header), ",".join('""' for _ in header)]
    for i, (name, ms, inst, branches, wait) in enumerate(kernels):
        values = [str(i), name, "%.3f" % ms, "{:,}".format(inst), str(branches), str(wait), "0.001"]
        lines.append(",".join('"%s"' % v for v in values))
    path.write_text("\n".join(lines) + "\n")


def test_profile_compare_table(tmp_path):
    ours, theirs = tmp_path / "ours.csv", tmp_path / "flash.csv"
    write_ncu_raw_csv(ours, [("void bwd_kernel<bf16, 128>(AttnParams)",
                              2.698, 762130432, 27447296, 2.2)])
    write_ncu_raw_csv(theirs, [("void flash_bwd_dq_dk_dv_loop(Flash_bwd_params)",
                                2.26, 539197440, 1671168, 2.19)])
    lines = profile_peers.compare([str(ours), str(theirs)]).splitlines()
    assert lines[0].startswith("2 kernels: [0] ours: void bwd_kernel")
    assert "[1] flash: void flash_bwd" in lines[0]
    cells = (re.split(r"\s{2,}", line.strip()) for line in lines[2:])
    rows = {c[0]: c[1:] for c in cells}
    assert rows["duration (ms)"] == ["2.698", "2.26"]
    assert rows["instructions"] == ["762,130,432", "539,197,440"]
    assert rows["branches"] == ["27,447,296", "1,671,168"]
    assert rows["stall wait"] == ["2.2", "2.19"]
    assert "stall misc" not in rows  # under 0.05 cycles an instruction: left out
    assert "ldmatrix" not in rows  # not in these exports
    assert profile_peers.number("3 (1; 2)") == 3.0 and profile_peers.number("n/a") is None


def test_profile_compare_reads_the_units_row(tmp_path):
    # ncu writes a short kernel's duration in us and bytes in whatever prefix fits.
    path = tmp_path / "short.csv"
    header = ["ID", "Kernel Name", "gpu__time_duration.sum", "dram__bytes_read.sum"]
    path.write_text("\n".join(",".join('"%s"' % v for v in row) for row in
                               (header, ["", "", "usecond", "Gbyte"],
                                ["0", "void fwd_kernel<bf16, 64>", "424.2", "1.5"])) + "\n")
    cells = (re.split(r"\s{2,}", line.strip())
             for line in profile_peers.compare([str(path)]).splitlines()[2:])
    rows = {c[0]: c[1:] for c in cells}
    assert rows["duration (ms)"] == ["0.4242"]
    assert rows["DRAM read (MB)"] == ["1,500"]


def test_profile_call_arguments():
    with pytest.raises(SystemExit):
        profile_peers.main(["call", "triton", "128", "2048", "0", "bwd"])
    with pytest.raises(SystemExit):
        profile_peers.main(["call", "fa2", "128", "2048", "2", "bwd"])


def test_profile_lines_of_a_source_page(tmp_path):
    # A made-up `--page source --csv --print-source sass` export: a loop (run
    # 4096 times) whose atomics wait in lg_throttle, then its next barrier.
    header = ["Address", "Source", "Warp Stall Sampling (All Samples)",
              "Warp Stall Sampling (Not-issued Samples)", "Instructions Executed",
              "stall_barrier", "stall_lg", "stall_wait", "stall_barrier (Not Issued)"]
    sass = [("BAR.SYNC.DEFER_BLOCKING 0x0", 1, 0, 1, "1,024"),
            ("@!P0  BRA 0x7f00", 30, 0, 0, "4,096"),
            ("HMMA.16816.F32.BF16 R4, R8, R12, R4", 0, 0, 10, "4,096"),
            ("REDG.E.ADD.F32x2.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R6", 0, 40, 4, "4,096"),
            ("BAR.SYNC.DEFER_BLOCKING 0x0", 0, 0, 10, "1,024"), ("EXIT", 0, 0, 4, "1,024")]
    rows = ['"Kernel Name","void bwd_kernel<bf16, 128>(AttnParams)"',
            ",".join('"%s"' % h for h in header)]
    for i, (text, barrier, lg, wait, executed) in enumerate(sass):
        total = barrier + lg + wait
        rows.append(",".join('"%s"' % v for v in (
            "0x%x" % (16 * i), text, total, total, executed, barrier, lg, wait, barrier)))
    path = tmp_path / "ours_src.csv"
    path.write_text("\n".join(rows) + "\n")
    out = profile_peers.where_warps_wait(str(path), top=2).splitlines()
    assert out[0] == "void bwd_kernel<bf16, 128>(AttnParams): 6 SASS lines, 100 samples"
    assert out[1] == "by reason: lg 40.0%, barrier 31.0%, wait 29.0%"
    assert out[3].split() == ["0", "4", "86.0%", "lg", "40.0%,", "barrier", "31.0%,", "wait",
                              "15.0%"]
    assert out[4].split()[:3] == ["4", "2", "14.0%"]  # the second barrier opens a stretch
    assert out[5] == "by execution count (count, lines, share):"
    assert out[6].split() == ["4096", "3", "84.0%"]  # the loop body
    assert out[7].split() == ["1024", "3", "16.0%"]
    assert out[9].split()[:4] == ["3", "44.00%", "lg", "40.00%"]
    assert out[10].split()[:4] == ["1", "30.00%", "barrier", "30.00%"]
    assert len(out) == 11
    empty = tmp_path / "empty_src.csv"
    empty.write_text('"Kernel Name","k"\n')
    assert "no stall samples" in profile_peers.where_warps_wait(str(empty))


def test_profile_mix_counts_opcodes_side_by_side(tmp_path):
    # Two made-up source pages: a guarded opcode counts as itself, modifiers
    # are dropped, and an opcode one kernel lacks reads 0.
    header = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed"]

    def page(name, sass):
        rows = ['"Kernel Name","%s"' % name, ",".join('"%s"' % h for h in header)]
        rows += [",".join('"%s"' % v for v in ("0x%x" % (16 * i), text, 0, executed))
                 for i, (text, executed) in enumerate(sass)]
        path = tmp_path / (name + "_src.csv")
        path.write_text("\n".join(rows) + "\n")
        return str(path)

    ours = page("ours", [("SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2", "12,000"),
                         ("@!P0 BRA 0x100", "12,000"), ("FSEL R4, R4, -INF , P1", "64"),
                         ("@P2 FSEL R5, R5, -INF , P2", "64")])
    theirs = page("theirs", [("SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2", "500"),
                             ("NANOSLEEP.SYNCS 0x989680", "400")])
    out = profile_peers.opcode_mix([ours, theirs]).splitlines()
    assert out[0].startswith("2 kernels: [0] ours_src.csv: ours; [1] theirs_src.csv: theirs")
    assert out[1].split() == ["opcode", "[0]", "[1]"]
    rows = [line.split() for line in out[2:]]
    assert rows == [["BRA", "12,000", "0"], ["SYNCS", "12,000", "500"], ["NANOSLEEP", "0", "400"],
                    ["FSEL", "128", "0"], ["total", "24,128", "900"]]
    assert len(profile_peers.opcode_mix([ours, theirs], top=1).splitlines()) == 4
    assert profile_peers.opcode("@!UP0 ULDC UR4, c[0x0][0x0]") == "ULDC"


def test_power_probe_shapes():
    args = power_probe.parse_args(["--shapes", "128:4096:0,64:2048:1", "--impls", "fa2,cudnn"])
    assert args.shapes == [(128, 4096, 0), (64, 2048, 1)] and args.impls == ["fa2", "cudnn"]
    assert power_probe.parse_args([]).seconds == 4.0
    assert power_probe.parse_args([]).dtype == "bf16"
    assert power_probe.parse_args(["--dtype", "fp16"]).dtype == "fp16"
    with pytest.raises(SystemExit):
        power_probe.parse_args(["--dtype", "f32"])
    assert power_probe.parse_args([]).modes == ["fwd"]
    assert power_probe.parse_args(["--modes", "fwd,bwd"]).modes == ["fwd", "bwd"]


@pytest.mark.parametrize("bad", [["--shapes", "128:4096"], ["--shapes", "96:2048:0"],
                                 ["--shapes", "128:3000:0"], ["--shapes", "128:2048:2"],
                                 ["--shapes", "d128"], ["--seconds", "0"],
                                 ["--modes", "fwd+bwd"]])
def test_power_probe_bad_arguments_exit(bad):
    with pytest.raises(SystemExit):
        power_probe.parse_args(bad)


def test_kernel_configs_arguments():
    args = kernel_configs.parse_args(["--shapes", "256:512:0", "--impls", "flash,cudnn"])
    assert args.shapes == [(256, 512, 0)] and args.impls == ["flash", "cudnn"]
    for bad in (["--shapes", "256:500:0"], ["--impls", "triton"]):
        with pytest.raises(SystemExit):
            kernel_configs.parse_args(bad)


@pytest.mark.parametrize("mean", [2, 256, 512, 2048, 8192, 16384])
def test_varlen_lengths_fill_the_tokens(mean):
    lengths = varlen.sequence_lengths(16384, mean, seed=0)
    assert sum(lengths) == 16384 and all(n > 0 for n in lengths)
    assert all(n <= 3 * mean // 2 for n in lengths)
    assert all(n >= mean // 2 for n in lengths[:-1])  # only the last one is trimmed
    assert lengths == varlen.sequence_lengths(16384, mean, seed=0)
    assert mean == 16384 or lengths != varlen.sequence_lengths(16384, mean, seed=1)


def test_varlen_flops_and_table():
    assert varlen.fwd_flops([3, 5], 2, 8, False) == 4.0 * 2 * 8 * (9 + 25)
    assert varlen.fwd_flops([3, 5], 2, 8, True) == 2.0 * 2 * 8 * (9 + 25)
    base = {"dtype": "bf16", "d": 64, "causal": True, "mean_len": 512, "sequences": 34, "h": 32}
    rows = [dict(base, backend="fa2", fwd_tflops=200.0, bwd_tflops=150.0, fwdbwd_tflops=160.0),
            dict(base, backend="flash", fwd_tflops=100.0, bwd_tflops=100.0, fwdbwd_tflops=100.0),
            dict(base, backend="cudnn_nested", error="no kernel")]
    table = varlen.format_rows(rows)
    assert " 2.00x  1.50x" in table and "cudnn_nested: no kernel" in table


@pytest.mark.parametrize("bad", [["--head-dims", "96"], ["--mean-lens", "1"], ["--causal", "2"],
                                 ["--impls", "cudnn"], ["--mean-lens", "99999"]])
def test_varlen_bad_arguments_exit(bad):
    with pytest.raises(SystemExit):
        varlen.parse_args(bad)

#!/usr/bin/env bash
# 2026-12-06 session 10:21 call 7: which CTA takes which tile of a round in the fixed-length
# Hopper forward, by SM id instead of blockIdx (EXPERIMENT, valid on a 132-SM GPU only):
# x1 = rank smid, x2 = rank smid / 2 + 66 (smid % 2) (the two SMs of a TPC half a round
# apart). H2 = HEAD b069113. d64 / d128, sm_90a. Question: does the L2 request coalescing of
# a head's K / V reads (and the joules) follow where a head's tiles run?
set -u
R=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/x.txz -C .dev/bw
export PYTHONPATH=python:bench
D=.dev/bw
echo "== correctness t=${SECONDS}s"
for v in x1 x2; do
  for c in 'bf16/many-tiles-gqa/d128' 'bf16/many-tiles-causal-sq>sk/d64'; do
    LD_LIBRARY_PATH=$D/$v timeout 25 $D/$v/fa2_cuda_check small "$c" 2>&1 | tail -n 2 | head -n 1
  done
done
echo "== ncu lrc t=${SECONDS}s"
m=lrc__average_xbar2gpc_sectors_op_read.ratio,lrc__xbar2gpc_sectors_op_read.sum,gpu__time_duration.sum
for v in H2 x1 x2; do
  FA2_LIBRARY=$D/$v/libfa2.so timeout 60 ncu --clock-control none --kernel-name "regex:fwd_kernel" \
    --launch-skip 3 --launch-count 1 --metrics $m --csv python3 bench/profile_peers.py call fa2 128 2048 0 fwd 2>/dev/null | \
    grep -E '^"' | awk -F'","' -v l="$v" 'NR>1 {gsub(/"/,"",$NF); printf "%-4s %-48s %s\n", l, $(NF-2), $NF}' | tee -a $R/lrc.txt
done
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 80 backends/cuda/tools/compare_builds.sh "2048,4096" "64,128" $D/H2 $D/x1 $D/x2 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in x1 x2 H2; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 40 python3 bench/power_probe.py --modes fwd --shapes 128:2048:0,64:2048:0 --impls fa2,cudnn --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^fwd"
done
echo "done ${SECONDS}s"

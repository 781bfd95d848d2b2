#!/usr/bin/env bash
# 2026-12-06 session 10:21 call 8: the fixed-length Hopper forward launched in clusters of 2 (c2) or 4 (c4) CTAs
# (EXPERIMENT: placement only, nothing shared between the CTAs of a cluster), so that a
# head's neighbouring query blocks run on one GPC. H2 = HEAD b069113. d64 / d128, sm_90a.
# Question: does the L2 request coalescing follow, and the joules with it?
set -u
R=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/c.txz -C .dev/bw
export PYTHONPATH=python:bench
D=.dev/bw
echo "== correctness t=${SECONDS}s"
for v in c2 c4; do
  for c in 'bf16/many-tiles-gqa/d128' 'bf16/many-tiles-causal-sq>sk/d64'; do
    LD_LIBRARY_PATH=$D/$v timeout 25 $D/$v/fa2_cuda_check small "$c" 2>&1 | tail -n 2 | head -n 1
  done
done
echo "== ncu lrc t=${SECONDS}s"
m=lrc__average_xbar2gpc_sectors_op_read.ratio,lrc__xbar2gpc_sectors_op_read.sum,gpu__time_duration.sum,launch__grid_size,launch__cluster_dim_x
for v in H2 c2 c4; do
  FA2_LIBRARY=$D/$v/libfa2.so timeout 60 ncu --clock-control none --kernel-name "regex:fwd_kernel" \
    --launch-skip 3 --launch-count 1 --metrics $m --csv python3 bench/profile_peers.py call fa2 128 2048 0 fwd 2>/dev/null | \
    grep -E '^"' | awk -F'","' -v l="$v" 'NR>1 {gsub(/"/,"",$NF); printf "%-4s %-48s %s\n", l, $(NF-2), $NF}' | tee -a $R/lrc.txt
done
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 80 backends/cuda/tools/compare_builds.sh "2048,4096" "64,128" $D/H2 $D/c2 $D/c4 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in c2 c4 H2; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 40 python3 bench/power_probe.py --modes fwd --shapes 128:2048:0,64:2048:0 --impls fa2,cudnn --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^fwd"
done
echo "done ${SECONDS}s"

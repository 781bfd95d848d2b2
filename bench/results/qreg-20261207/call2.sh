#!/usr/bin/env bash
# 2026-12-07 10:33– session, after call1.sh (Q1: d128 +1..4% in CUDA events at 1k-4k, sustained
# causal 2k +2%; d64 level): Q2.patch = Q in registers at d128's 128-key plan only (its d128
# kernels' SASS identical to Q1's, every other kernel identical to HEAD's). compute-sanitizer on
# Q2 at d128, then CUDA events in both orders and sustained probes against F1 (HEAD).
set -u
R=$OUT
D=.dev
tar xJf $D/carry/c5.txz -C $D && tar xJf $D/carry/c14.txz -C $D
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python:bench
for tool in memcheck racecheck; do
  (LD_LIBRARY_PATH=$D/Q2 timeout 180 compute-sanitizer --tool $tool --error-exitcode 9 \
    $D/Q2/fa2_cuda_check small /d128 > $R/$tool-d128.txt 2>&1
   echo "$tool d128 rc=$? $(tail -n 1 $R/$tool-d128.txt)" > $R/$tool-d128.sum) &
done
wait
cat $R/*.sum
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 100 backends/cuda/tools/compare_builds.sh "1024,2048,4096" \
  "128" $D/F1 $D/Q2 2>&1 | tee $R/ab.txt
FA2_BENCH_FWD=1 timeout 100 backends/cuda/tools/compare_builds.sh "1024,2048,4096" \
  "128" $D/Q2 $D/F1 2>&1 | tee $R/ba.txt
echo "== sustained t=${SECONDS}s"
for lib in Q2 F1 Q2 F1; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 60 python3 bench/power_probe.py --modes fwd \
    --shapes 128:1024:0,128:2048:0,128:2048:1 --impls fa2,cudnn \
    --seconds 2.5 2>&1 | grep -E "^fwd"
done 2>&1 | tee $R/sustained.txt
echo "done ${SECONDS}s"

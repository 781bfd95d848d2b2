#!/usr/bin/env bash
# 2026-12-07 09:00– session, after call2.sh: M1 (the immediate-compare mask everywhere, one form)
# against F1 (HEAD) at d64, more rounds where call1 / call2 disagreed (non-causal 1k / 2k), then
# compute-sanitizer on M1 (the mask's window cases are in `small`).
set -u
R=$OUT
D=.dev
for c in c5 c10; do tar xJf $D/carry/$c.txz -C $D; done
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python:bench
echo "== events t=${SECONDS}s"
for k in 1 2; do
  FA2_BENCH_FWD=1 timeout 60 backends/cuda/tools/compare_builds.sh "1024,2048,4096" "64" \
    $D/F1 $D/M1 2>&1 | tee -a $R/ab.txt
done
echo "== sustained t=${SECONDS}s"
for lib in M1 F1 M1 F1 M1 F1; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 50 python3 bench/power_probe.py --modes fwd \
    --shapes 64:1024:0,64:2048:0,64:2048:1 --impls fa2,cudnn --seconds 2.5 2>&1 | grep -E "^fwd"
done 2>&1 | tee $R/sustained.txt
echo "== sanitizer t=${SECONDS}s"
for tool in memcheck racecheck; do
  (LD_LIBRARY_PATH=$D/M1 timeout 170 compute-sanitizer --tool $tool --error-exitcode 9 \
    $D/M1/fa2_cuda_check small /d64 > $R/$tool-d64.txt 2>&1
   echo "$tool d64 rc=$? $(tail -n 1 $R/$tool-d64.txt)" > $R/$tool.sum) &
done
wait
cat $R/*.sum
echo "done ${SECONDS}s"

#!/usr/bin/env bash
# 2026-12-07 session: the Hopper d64 forward with warpgroup 1 started ~1 us (S2) / ~2.5 us (S3)
# after warpgroup 0 (S2.patch, __nanosleep at the consumers' start; EXPERIMENT), against HEAD
# (H64).
set -u
R=$OUT
tar xJf .dev/carry/c6.txz -C .dev
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python:bench
D=.dev
for v in S2 S3; do
  LD_LIBRARY_PATH=$D/$v timeout 20 $D/$v/fa2_cuda_check small /d64 > $R/small-$v.txt 2>&1
  echo "small $v rc $?: $(tail -n 1 $R/small-$v.txt)"
done
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 90 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192" "64" \
  $D/H64 $D/S2 $D/S3 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in S2 S3 H64; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 35 python3 bench/power_probe.py --modes fwd \
    --shapes 64:2048:0,64:2048:1 --impls fa2,cudnn --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt |
    grep -E "^fwd"
done
echo "done ${SECONDS}s"

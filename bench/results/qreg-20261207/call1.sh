#!/usr/bin/env bash
# 2026-12-07 10:33– session: Q in registers as Q K^T's A operand in the Hopper forward (Q1.patch:
# ldmatrix once a tile, wgmma RS with B K-major; the Q stage goes back as the tile starts; at
# d64 and d128's 128-key plan) against HEAD's kernels (F1): checks, CUDA events, sustained.
set -u
R=$OUT
D=.dev
tar xJf $D/carry/c5.txz -C $D && tar xJf $D/carry/c13.txz -C $D
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python:bench
for d in 64 128; do
  LD_LIBRARY_PATH=$D/Q1 timeout 60 $D/Q1/fa2_cuda_check small /d$d > $R/small-Q1-d$d.txt 2>&1 &
done
LD_LIBRARY_PATH=$D/Q1 timeout 150 $D/Q1/fa2_conformance --gtest_filter='*cuda*' \
  > $R/conf-Q1.txt 2>&1 &
wait
for d in 64 128; do echo "small /d$d: $(grep -E 'cases failed' $R/small-Q1-d$d.txt)"; done
echo "conformance: $(grep -E '^\[  PASSED|^\[  FAILED' $R/conf-Q1.txt | tr '\n' ' ')"
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 150 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192,16384" \
  "64,128" $D/F1 $D/Q1 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in Q1 F1 Q1 F1; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 60 python3 bench/power_probe.py --modes fwd \
    --shapes 64:2048:1,64:2048:0,128:2048:0,128:2048:1 --impls fa2,cudnn --seconds 2.5 2>&1 |
    grep -E "^fwd"
done 2>&1 | tee $R/sustained.txt
echo "done ${SECONDS}s"

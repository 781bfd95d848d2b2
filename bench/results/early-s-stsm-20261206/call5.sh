#!/usr/bin/env bash
# 2026-12-06 session 10:21 call 5: three one-line variants of the sm80 d64 backward (sm80
# path): v1 = whole-tile Q / dO copies (kWholeTileLoads) at d64 too; v3 = dS (not P) stored
# by stmatrix at d64; v4 = dQ atomics of 8 bytes from the accumulator pairs (no RowPieces
# shuffles) at d64. H = HEAD b069113. All d64 only, sm_90a.
set -u
R=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/v.txz -C .dev/bw
export PYTHONPATH=python:bench FA2_CUDA_PATH=sm80
D=.dev/bw
echo "== events t=${SECONDS}s"
timeout 150 backends/cuda/tools/compare_builds.sh "1024,2048,8192,16384" "64" $D/H $D/v1 $D/v3 $D/v4 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in H v1 v3 v4; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 40 python3 bench/power_probe.py --modes bwd --shapes 64:16384:0 --impls fa2_sm80,flash --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^bwd"
done
echo "== correctness t=${SECONDS}s"
for v in v1 v3 v4; do
  LD_LIBRARY_PATH=$D/$v timeout 40 $D/$v/fa2_cuda_check small /d64 > $R/small-$v.txt 2>&1; echo "small $v rc $?: ok $(grep -c '^ok' $R/small-$v.txt), FAIL $(grep -c '^FAIL' $R/small-$v.txt)"
done
echo "done ${SECONDS}s"

#!/usr/bin/env bash
# 2026-12-07 15:54– session: the sm80 backward's dQ accumulator in row pairs (P1.patch, EXPERIMENT,
# d64 / d128): each lane adds its own 16 bytes a row and 16 columns, the warp's 8 rows filling
# four 128-byte lines, where RowPieces shuffled 16 adjacent columns of a row together (32 SHFL and
# ~100 selects a warp and iteration at d64; the main loop 1881 -> 1664 instructions, moved).
# Against HEAD's kernels (F2): checks on the sm80 path, CUDA events, sustained against `flash`.
# On the H200 HEAD's standing first (standing-20261207d/call.sh).
set -u
R=$OUT
if [[ $(nvidia-smi --query-gpu=name --format=csv,noheader) == *H200* ]]; then
  OUT=$R/standing bash bench/results/standing-20261207d/call.sh > /tmp/standing.txt 2>&1
  head -n 30 /tmp/standing.txt
fi
tar xJf .dev/carry/c15.txz -C .dev && tar xJf .dev/carry/c17.txz -C .dev
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/log.txt
export FA2_CUDA_PATH=sm80 PYTHONPATH=python:bench
D=.dev
for d in 64 128; do
  LD_LIBRARY_PATH=$D/P1 timeout 60 $D/P1/fa2_cuda_check small /d$d > /tmp/small-$d.txt 2>&1
  echo "small P1 d$d rc $?: $(grep -E 'cases failed' /tmp/small-$d.txt)" | tee -a $R/log.txt
done
LD_LIBRARY_PATH=$D/P1 timeout 150 $D/P1/fa2_conformance --gtest_filter='*cuda*' > /tmp/conf.txt 2>&1
echo "conformance P1 (sm80 path) rc $?: $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/conf.txt |
  tr '\n' ' ') t=${SECONDS}s" | tee -a $R/log.txt
grep -E "^\[  FAILED" /tmp/conf.txt | head -n 20 | tee -a $R/log.txt
echo "== events t=${SECONDS}s" | tee -a $R/log.txt
timeout 90 backends/cuda/tools/compare_builds.sh "1024,4096,8192,16384" "64,128" $D/F2 $D/P1 \
  2>&1 | tee -a $R/log.txt
echo "== sustained t=${SECONDS}s" | tee -a $R/log.txt
for lib in P1 F2 P1 F2; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 40 python3 bench/power_probe.py --modes bwd \
    --shapes 64:8192:0,64:16384:0,128:8192:0 --impls fa2_sm80,flash --seconds 2.5 2>&1 |
    grep -E "^bwd"
done | tee -a $R/log.txt
echo "== memcheck t=${SECONDS}s" | tee -a $R/log.txt
LD_LIBRARY_PATH=$D/P1 timeout 150 compute-sanitizer --tool memcheck $D/P1/fa2_cuda_check small \
  /d64 > /tmp/memcheck.txt 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|cases failed' /tmp/memcheck.txt | tr '\n' ' ')" |
  tee -a $R/log.txt
echo "done ${SECONDS}s" | tee -a $R/log.txt

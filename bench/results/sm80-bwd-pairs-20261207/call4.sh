#!/usr/bin/env bash
# For the next session (not run here): the paired dQ layout at d32 / d96 / d192 too
# (P3-more-dims.patch = P3, EXPERIMENT; today those add dQ with 8-byte atomics, which the pairs
# would halve) against 1d57323's kernels (B4), on the sm80 path: checks, CUDA events, sustained
# against `flash`. Carry .dev/carry/c19.txz (B4 and P3, head dims 32 / 96 / 192).
set -u
R=$OUT
tar xJf .dev/carry/c19.txz -C .dev
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/log.txt
export FA2_CUDA_PATH=sm80 PYTHONPATH=python:bench
D=.dev
# (`small` holds d40 / 64 / 128 / 192 / 256; `full` also 32, 96 and the padded 72 and 136.)
for d in 32 72 96 136 192; do
  LD_LIBRARY_PATH=$D/P3 timeout 150 $D/P3/fa2_cuda_check full /d$d > /tmp/small-$d.txt 2>&1 &
done
LD_LIBRARY_PATH=$D/P3 timeout 150 $D/P3/fa2_conformance --gtest_filter='*cuda*' \
  > /tmp/conf.txt 2>&1 &
wait
for d in 32 72 96 136 192; do
  echo "full P3 d$d: $(grep -E 'cases failed' /tmp/small-$d.txt)"
done |
  tee -a $R/log.txt
echo "conformance P3 (sm80 path): $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/conf.txt |
  tr '\n' ' ') t=${SECONDS}s" | tee -a $R/log.txt
LD_LIBRARY_PATH=$D/P3 timeout 120 compute-sanitizer --tool memcheck $D/P3/fa2_cuda_check full \
  /d136 > /tmp/memcheck.txt 2>&1
echo "memcheck d136 rc $?: $(grep -E 'ERROR SUMMARY|cases failed' /tmp/memcheck.txt |
  tr '\n' ' ') t=${SECONDS}s" | tee -a $R/log.txt
echo "== events t=${SECONDS}s" | tee -a $R/log.txt
timeout 120 backends/cuda/tools/compare_builds.sh "1024,4096,16384" "32,96,192" $D/B4 $D/P3 \
  2>&1 | tee -a $R/log.txt
echo "== sustained t=${SECONDS}s" | tee -a $R/log.txt
for lib in P3 B4 P3 B4; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 40 python3 bench/power_probe.py --modes bwd \
    --shapes 96:8192:0,192:8192:0 --impls fa2_sm80,flash --seconds 2.5 2>&1 | grep -E "^bwd"
done | tee -a $R/log.txt
echo "done ${SECONDS}s" | tee -a $R/log.txt

#!/usr/bin/env bash
# 2026-12-07 09:00– session: the Hopper producers' waits with a suspend-time hint (S1.patch: the
# thread sleeps until the phase completes) against HEAD's kernels (F1). ncu of F1 at d64 2k: the
# forward's producer retried its try_wait ~200 times per key block (10% of the instructions).
# Checks of S1, CUDA events A/B, sustained A/B (each build with cuDNN in the same process), ncu.
set -u
R=$OUT
D=.dev
tar xJf $D/carry/c5.txz -C $D && tar xJf $D/carry/c9.txz -C $D
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python:bench
for d in 64 128 256; do
  LD_LIBRARY_PATH=$D/S1 timeout 60 $D/S1/fa2_cuda_check small /d$d > $R/small-S1-d$d.txt 2>&1 &
done
LD_LIBRARY_PATH=$D/S1 timeout 120 $D/S1/fa2_conformance --gtest_filter='*cuda*' \
  > $R/conf-S1.txt 2>&1 &
wait
for d in 64 128 256; do echo "small /d$d: $(grep -E 'cases failed' $R/small-S1-d$d.txt)"; done
echo "conformance: $(grep -E '^\[  PASSED|^\[  FAILED' $R/conf-S1.txt | tr '\n' ' ')"
echo "== events t=${SECONDS}s"
timeout 150 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192" "64,128,256" \
  $D/F1 $D/S1 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in S1 F1 S1 F1; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 60 python3 bench/power_probe.py --modes fwd \
    --shapes 64:2048:1,64:2048:0,128:2048:0 --impls fa2,cudnn --seconds 2.5 2>&1 | grep -E "^fwd"
done 2>&1 | tee $R/sustained.txt
for lib in S1 F1; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 60 python3 bench/power_probe.py --modes bwd \
    --shapes 64:4096:0,128:4096:0 --impls fa2,cudnn --seconds 2.5 2>&1 | grep -E "^bwd"
done 2>&1 | tee -a $R/sustained.txt
if [[ -z ${SKIP_NCU:-} ]]; then
  echo "== ncu t=${SECONDS}s"
  OUT=$R/S1 timeout 60 backends/cuda/tools/profile_vs_peers.sh $D/S1 64 2048 1 fwd fa2 \
    > $R/ncu-S1.txt 2>&1
  head -n 30 $R/ncu-S1.txt
fi
echo "done ${SECONDS}s"

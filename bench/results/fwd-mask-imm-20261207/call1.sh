#!/usr/bin/env bash
# 2026-12-07 09:00– session: the Hopper forward's masked blocks tested with one compare of a
# register and an immediate an element (M1.patch: Mask::keys_seen_from, the left end only where
# a window cuts the warp's rows; cuDNN's d64 causal 2k kernel spends ~130 instructions a warp on
# a masked block, HEAD's ~400) against HEAD's kernels (F1). On the H200 first HEAD's standing.
set -u
R=$OUT
D=.dev
tar xJf $D/carry/c5.txz -C $D && tar xJf $D/carry/c10.txz -C $D
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if [[ $gpu == *H200* ]]; then
  OUT=$R/standing bash bench/results/standing-20261207b/call.sh > $R/standing.txt 2>&1
  tail -n 45 $R/standing/bf16/sxs-bf16.txt; grep -E "TF/s" $R/standing/log.txt
fi
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python:bench
for d in 64 128 256; do
  LD_LIBRARY_PATH=$D/M1 timeout 60 $D/M1/fa2_cuda_check small /d$d > $R/small-M1-d$d.txt 2>&1 &
done
LD_LIBRARY_PATH=$D/M1 timeout 120 $D/M1/fa2_conformance --gtest_filter='*cuda*' \
  > $R/conf-M1.txt 2>&1 &
wait
for d in 64 128 256; do echo "small /d$d: $(grep -E 'cases failed' $R/small-M1-d$d.txt)"; done
echo "conformance: $(grep -E '^\[  PASSED|^\[  FAILED' $R/conf-M1.txt | tr '\n' ' ')"
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 120 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192" \
  "64,128,256" $D/F1 $D/M1 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in M1 F1 M1 F1; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 60 python3 bench/power_probe.py --modes fwd \
    --shapes 64:2048:1,128:2048:1,64:2048:0 --impls fa2,cudnn --seconds 2.5 2>&1 | grep -E "^fwd"
done 2>&1 | tee $R/sustained.txt
echo "done ${SECONDS}s"

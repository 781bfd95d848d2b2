#!/usr/bin/env bash
# 2026-12-07 session, call 1. On the H200: HEAD's standing (F1 = c60715f's kernels, as committed):
# bf16 side by side with every SDPA peer, sustained probes at the misses
# (bench/results/d64-tma-20261206/call2.sh). On an H100: the sm80 d64 backward at 8k under ncu,
# HEAD (F1) against O1 (stepped copy offsets, -2..-4.5%) and `flash`; O2 (O1 + whole-tile copies
# at d64) checked and timed against F1.
set -u
R=$OUT
tar xJf .dev/carry/c5.txz -C .dev
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if [[ $gpu == *H200* ]]; then
  bash bench/results/d64-tma-20261206/call2.sh
  exit
fi
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export FA2_CUDA_PATH=sm80 PYTHONPATH=python:bench
D=.dev
LD_LIBRARY_PATH=$D/O2 timeout 30 $D/O2/fa2_cuda_check small /d64 > $R/small-O2-64.txt 2>&1
echo "small O2 d64 rc $?: $(tail -n 1 $R/small-O2-64.txt)"
echo "== events t=${SECONDS}s"
timeout 40 backends/cuda/tools/compare_builds.sh "8192,16384" "64" $D/F1 $D/O2 2>&1 | tee $R/ab64.txt
echo "== sustained t=${SECONDS}s"
for lib in O2 F1; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 30 python3 bench/power_probe.py --modes bwd \
    --shapes 64:8192:0,64:16384:0 --impls fa2_sm80,flash --seconds 2.5 2>&1 | grep -E "^bwd"
done
echo "== ncu t=${SECONDS}s"
OUT=$R/F1 timeout 150 backends/cuda/tools/profile_vs_peers.sh $D/F1 64 8192 0 bwd fa2_sm80,flash \
  > $R/ncu-F1.txt 2>&1
OUT=$R/O1 timeout 100 backends/cuda/tools/profile_vs_peers.sh $D/O1 64 8192 0 bwd fa2_sm80 \
  > $R/ncu-O1.txt 2>&1
head -n 40 $R/ncu-F1.txt $R/ncu-O1.txt
echo "done ${SECONDS}s"

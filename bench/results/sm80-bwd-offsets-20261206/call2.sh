#!/usr/bin/env bash
# 2026-12-06 22:29 session, call 2 (call 1 never got a machine; ~300 device seconds left): the
# smallest form of call 1, O1 against HEAD's kernels (F1) at the d64 points #3 misses.
set -u
R=$OUT
tar xJf .dev/carry/c5.txz -C .dev
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export FA2_CUDA_PATH=sm80 PYTHONPATH=python:bench
D=.dev
for d in 64 128; do
  LD_LIBRARY_PATH=$D/O1 timeout 30 $D/O1/fa2_cuda_check small /d$d > $R/small-O1-$d.txt 2>&1
  echo "small O1 d$d rc $?: $(tail -n 1 $R/small-O1-$d.txt)"
done
echo "== events t=${SECONDS}s"
timeout 40 backends/cuda/tools/compare_builds.sh "8192,16384" "64" $D/F1 $D/O1 2>&1 | tee $R/ab64.txt
echo "== sustained t=${SECONDS}s"
for lib in O1 F1; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 30 python3 bench/power_probe.py --modes bwd --shapes 64:8192:0,64:16384:0 --impls fa2_sm80,flash --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^bwd"
done
echo "done ${SECONDS}s"

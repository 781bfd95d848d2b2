#!/usr/bin/env bash
# 2026-12-07 session: on an H100 call1.sh (V1 against F1, with ncu); on the H200 V1 against F1
# without ncu, then HEAD's standing (bench/results/d64-tma-20261206/call2.sh: bf16 side by side
# with every SDPA peer, sustained probes at the misses).
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if [[ $gpu != *H200* ]]; then bash bench/results/l2hint-20261207/call1.sh; exit; fi
R=$OUT
tar xJf .dev/carry/c5.txz -C .dev && tar xJf .dev/carry/c7.txz -C .dev
D=.dev
(
  export FA2_CUDA_PATH=sm80 PYTHONPATH=python:bench
  LD_LIBRARY_PATH=$D/V1 timeout 40 $D/V1/fa2_cuda_check small /d64 > $R/small-V1.txt 2>&1
  echo "small V1 d64 rc $?: $(tail -n 1 $R/small-V1.txt)"
  timeout 50 backends/cuda/tools/compare_builds.sh "8192,16384" "64" $D/F1 $D/V1 2>&1 |
    tee $R/ab.txt
  for lib in V1 F1; do
    echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 30 python3 bench/power_probe.py \
      --modes bwd --shapes 64:8192:0,64:16384:0 --impls fa2_sm80,flash --seconds 2.5 2>&1 |
      grep -E "^bwd"
  done
) 2>&1 | tee $R/v1.txt
echo "== standing t=${SECONDS}s"
bash bench/results/d64-tma-20261206/call2.sh

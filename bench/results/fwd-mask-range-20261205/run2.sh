#!/usr/bin/env bash
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
for d in /d64 /d128 /d256; do echo "== H2 small $d"; LD_LIBRARY_PATH=.dev/H2 .dev/H2/fa2_cuda_check small $d 2>&1 | tail -1; done
for d in /d64 /d128; do echo "== H small $d"; LD_LIBRARY_PATH=.dev/H .dev/H/fa2_cuda_check small $d 2>&1 | tail -1; done
for d in /d64 /d128; do echo "== H2 full $d"; LD_LIBRARY_PATH=.dev/H2 .dev/H2/fa2_cuda_check full $d 2>&1 | tail -1; done
echo "== H2 conformance"; LD_LIBRARY_PATH=.dev/H2 timeout 120 .dev/H2/fa2_conformance --gtest_filter='*cuda*:*Cuda*' 2>&1 | tail -2
echo "== compare fwd"
FA2_BENCH_FWD=1 backends/cuda/tools/compare_builds.sh "1024,2048,4096" "64,128" .dev/B .dev/H .dev/H2 2>&1 | tail -14
echo "== sustained"
for v in B H H2; do
  ((SECONDS < 330)) || { echo "skipped sustained $v at ${SECONDS}s"; continue; }
  echo "-- $v"
  FA2_LIBRARY=.dev/$v/libfa2.so PYTHONPATH=python:bench timeout 100 python3 bench/power_probe.py --modes fwd --seconds 2.5 \
    --shapes 64:2048:1,128:2048:1 --impls $([[ $v == B ]] && echo fa2,cudnn || echo fa2) 2>&1 | grep -v "^#" | tail -8
done

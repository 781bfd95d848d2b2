#!/usr/bin/env bash
# 2026-12-06 session 10:21 call 4: the sm80 backward's stmatrix stores from d128 up
# (kStoreMatrix). M = HEAD 71952f0 + stsm128.patch, all six head-dim buckets; B3 = HEAD
# (d64 / d128 / d256). Checks on the sm80 path (FA2_CUDA_PATH=sm80), then A/B again.
set -u
R=$OUT  # files straight there: a run cut off at the limit keeps them
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/b3.txz -C .dev/bw && tar xJf .dev/carry/m.txz -C .dev/bw
export PYTHONPATH=python:bench FA2_CUDA_PATH=sm80
D=.dev/bw
echo "== events t=${SECONDS}s"
timeout 110 backends/cuda/tools/compare_builds.sh "1024,2048,8192,16384" "128,256" $D/B3 $D/M 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in M B3; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 45 python3 bench/power_probe.py --modes bwd --shapes 128:8192:0,256:8192:0 --impls fa2_sm80,flash --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^bwd"
done
echo "== conformance M (sm80 path) t=${SECONDS}s"
LD_LIBRARY_PATH=$D/M timeout 200 $D/M/fa2_conformance --gtest_filter='*cuda*' > $R/conf-M.txt 2>&1; echo "conf rc $?: $(grep -E '^\[  (PASSED|FAILED)' $R/conf-M.txt | tr '\n' ' ')"
echo "== small M t=${SECONDS}s"
for d in 192 256; do
  LD_LIBRARY_PATH=$D/M timeout 50 $D/M/fa2_cuda_check small /d$d > $R/small-M-$d.txt 2>&1; echo "small M d$d rc $?: ok $(grep -c '^ok' $R/small-M-$d.txt), FAIL $(grep -c '^FAIL' $R/small-M-$d.txt)"
done
FA2_CUDA_SMEM_LIMIT=166912 LD_LIBRARY_PATH=$D/M timeout 30 $D/M/fa2_cuda_check small causal127x113-gqa > $R/small-M-a100.txt 2>&1; echo "small M a100 plans rc $?: $(tail -n 1 $R/small-M-a100.txt)"
echo "== sanitizers M t=${SECONDS}s"
for tool in memcheck racecheck; do
  for c in causal127x113-gqa/d192 window-mqa/d128; do
    LD_LIBRARY_PATH=$D/M timeout 35 compute-sanitizer --tool $tool --error-exitcode 9 $D/M/fa2_cuda_check small $c > $R/$tool-${c%%/*}-${c##*/}.txt 2>&1; echo "$tool $c rc $?: $(tail -n 1 $R/$tool-${c%%/*}-${c##*/}.txt)"
  done
done
echo "done ${SECONDS}s"

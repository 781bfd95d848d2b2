#!/usr/bin/env bash
# S = the shipped change (HEAD + the out tiles in the last V stage, comments as committed;
# its Hopper forward kernels SASS-identical to EV's), M = HEAD before it.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
mkdir -p /tmp/v
LD_LIBRARY_PATH=.dev/S timeout 170 .dev/S/fa2_conformance --gtest_filter='*cuda*' > /tmp/v/conf 2>&1 &
LD_LIBRARY_PATH=.dev/S timeout 170 .dev/S/fa2_cuda_check small > /tmp/v/small 2>&1 &
wait
echo "== S conformance *cuda*: $(grep -E '^\[  (PASSED|FAILED) ' /tmp/v/conf | tr '\n' ' ')"
grep -E '^\[  FAILED  \]' /tmp/v/conf | head -5
echo "== S small (all head dims of its list): $(grep -E 'cases failed' /tmp/v/small | tail -1)"
echo "checks done ${SECONDS}s"
FA2_BENCH_FWD=1 backends/cuda/tools/compare_builds.sh "8192" "128" .dev/M .dev/S 2>&1 | tail -3
echo "done ${SECONDS}s"

#!/usr/bin/env bash
# 2026-12-06 session 05:38 call 5: T4 = HEAD f21f315 + sm80_fwd_rows_first_above(256) = 4 (a head's
# tiles together up to 4 query blocks: causal 512 at d256), B = HEAD; d256 builds.
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python:bench FA2_CUDA_PATH=sm80
B=.dev/s9/B; T=.dev/s9/T4
echo "== correctness t=${SECONDS}s"
LD_LIBRARY_PATH=$T timeout 60 $T/fa2_cuda_check small /d256 > $R/small.txt 2>&1; echo small rc $?; tail -n 1 $R/small.txt
LD_LIBRARY_PATH=$T timeout 90 $T/fa2_conformance --gtest_filter='*cuda*d256*' > $R/conf.txt 2>&1; echo conf rc $?; tail -n 1 $R/conf.txt
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 90 backends/cuda/tools/compare_builds.sh "512,1024" "256" $B $T 2>&1 | tee $R/ab1.txt
FA2_BENCH_FWD=1 timeout 90 backends/cuda/tools/compare_builds.sh "512,1024" "256" $T $B 2>&1 | tee $R/ab2.txt
echo "== sustained t=${SECONDS}s"
for lib in T4 B; do
  echo "-- $lib"; FA2_LIBRARY=.dev/s9/$lib/libfa2.so timeout 40 python3 bench/power_probe.py --shapes 256:512:1 --impls fa2_sm80,flash --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^fwd"
done
echo "== sanitizers t=${SECONDS}s"
LD_LIBRARY_PATH=$T timeout 130 compute-sanitizer --tool memcheck --error-exitcode 9 $T/fa2_cuda_check small /d256 > $R/memcheck.txt 2>&1; echo memcheck rc $?; tail -n 2 $R/memcheck.txt
LD_LIBRARY_PATH=$T timeout 160 compute-sanitizer --tool racecheck --error-exitcode 9 $T/fa2_cuda_check small /d256 > $R/racecheck.txt 2>&1; echo racecheck rc $?; tail -n 2 $R/racecheck.txt
echo "done ${SECONDS}s"

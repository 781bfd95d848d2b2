#!/usr/bin/env bash
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
FA2_BENCH_FWD=1 backends/cuda/tools/compare_builds.sh "1024,2048,4096" "64" .dev/B .dev/E 2>&1 | tail -7
echo "compare done ${SECONDS}s"
c=.dev/E/fa2_cuda_check
mkdir -p /tmp/v
LD_LIBRARY_PATH=.dev/E $c small /d64 > /tmp/v/small 2>&1 &
LD_LIBRARY_PATH=.dev/E timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $c small /d64 > /tmp/v/racecheck 2>&1 &
LD_LIBRARY_PATH=.dev/E timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $c small /d64 > /tmp/v/memcheck 2>&1 &
wait
for f in small memcheck racecheck; do echo "== $f"; grep -E "cases failed|ERROR SUMMARY|RACECHECK SUMMARY" /tmp/v/$f | tail -2; done
echo "done ${SECONDS}s"

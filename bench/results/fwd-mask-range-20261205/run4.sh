#!/usr/bin/env bash
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=.dev/D3
c=.dev/D3/fa2_cuda_check
mkdir -p /tmp/v
$c small /d128 > /tmp/v/small 2>&1 &
$c full /d128 > /tmp/v/full 2>&1 &
timeout 200 .dev/D3/fa2_conformance --gtest_filter='*cuda*' > /tmp/v/conf 2>&1 &
timeout 250 compute-sanitizer --tool memcheck --error-exitcode 9 $c small /d128 > /tmp/v/memcheck 2>&1 &
timeout 250 compute-sanitizer --tool racecheck --error-exitcode 9 $c small /d128 > /tmp/v/racecheck 2>&1 &
wait
for f in small full conf memcheck racecheck; do echo "== $f"; grep -E "cases failed|PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|hazard" /tmp/v/$f | tail -3; done
echo "== compare fwd at ${SECONDS}s"
unset LD_LIBRARY_PATH
FA2_BENCH_FWD=1 backends/cuda/tools/compare_builds.sh "1024,2048,4096" "128" .dev/B .dev/D3 2>&1 | tail -7
echo "== done at ${SECONDS}s"

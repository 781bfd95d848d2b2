#!/usr/bin/env bash
# H0 = HEAD 85e6f4d, KV = k2v3.patch (the d128 128-key forward: two K stages, three V stages, two Q buffers)
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
c=.dev/KV/fa2_cuda_check; mkdir -p /tmp/v
LD_LIBRARY_PATH=.dev/KV $c small /d128 > /tmp/v/small128 2>&1 &
LD_LIBRARY_PATH=.dev/KV $c small /d64 > /tmp/v/small64 2>&1 &
LD_LIBRARY_PATH=.dev/KV timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 $c small /d128 > /tmp/v/racecheck128 2>&1 &
LD_LIBRARY_PATH=.dev/KV timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 $c small /d128 > /tmp/v/memcheck128 2>&1 &
LD_LIBRARY_PATH=.dev/KV timeout 240 .dev/KV/fa2_conformance --gtest_filter='*cuda*' > /tmp/v/conf 2>&1 &
wait
for f in small64 small128 memcheck128 racecheck128; do echo "== KV $f: $(grep -E 'cases failed|ERROR SUMMARY|RACECHECK SUMMARY' /tmp/v/$f | tail -2 | tr '\n' ' ')"; done
echo "== KV conformance: $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/v/conf | tr '\n' ' ')"
echo "checks done ${SECONDS}s"
FA2_BENCH_FWD=1 backends/cuda/tools/compare_builds.sh "1024,2048,4096" "128" .dev/H0 .dev/KV 2>&1 | tail -7
FA2_BENCH_FWD=1 backends/cuda/tools/compare_builds.sh "1024,2048,4096" "128" .dev/KV .dev/H0 2>&1 | tail -7
echo "compare done ${SECONDS}s"
export PYTHONPATH=python:bench
for v in H0 KV; do
  impls=fa2; [[ $v == H0 ]] && impls=fa2,cudnn
  FA2_LIBRARY=.dev/$v/libfa2.so python3 bench/power_probe.py --modes fwd --seconds 2.5 \
    --shapes 128:1024:0,128:2048:0,128:2048:1,128:4096:0 --impls $impls 2>&1 | grep -v Warn | sed "s/^/$v: /"
done
echo "done ${SECONDS}s"

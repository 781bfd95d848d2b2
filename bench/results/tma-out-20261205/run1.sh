#!/usr/bin/env bash
# H0 = HEAD 85e6f4d, T1 = tma-out.patch (the fixed-length Hopper forward's O stored by the TMA)
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
c=.dev/T1/fa2_cuda_check; mkdir -p /tmp/v
LD_LIBRARY_PATH=.dev/T1 $c small /d64 > /tmp/v/small64 2>&1 &
LD_LIBRARY_PATH=.dev/T1 $c small /d128 > /tmp/v/small128 2>&1 &
LD_LIBRARY_PATH=.dev/T1 $c small /d40 > /tmp/v/small40 2>&1 &
LD_LIBRARY_PATH=.dev/T1 timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 $c small /d128 > /tmp/v/racecheck128 2>&1 &
LD_LIBRARY_PATH=.dev/T1 timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 $c small /d64 > /tmp/v/memcheck64 2>&1 &
LD_LIBRARY_PATH=.dev/T1 timeout 240 .dev/T1/fa2_conformance --gtest_filter='*cuda*' > /tmp/v/conf 2>&1 &
wait
for f in small40 small64 small128 memcheck64 racecheck128; do echo "== T1 $f: $(grep -E 'cases failed|ERROR SUMMARY|RACECHECK SUMMARY' /tmp/v/$f | tail -2 | tr '\n' ' ')"; done
echo "== T1 conformance: $(grep -E '^\[  PASSED|^\[  FAILED|tests ran' /tmp/v/conf | tr '\n' ' ')"
grep -E "FAIL|fail" /tmp/v/small64 /tmp/v/small128 | head -5
echo "checks done ${SECONDS}s"
FA2_BENCH_FWD=1 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192" "64,128" .dev/H0 .dev/T1 2>&1 | tail -17
echo "compare done ${SECONDS}s"
export PYTHONPATH=python:bench
for v in H0 T1; do
  impls=fa2; [[ $v == H0 ]] && impls=fa2,cudnn
  FA2_LIBRARY=.dev/$v/libfa2.so python3 bench/power_probe.py --modes fwd --seconds 2.5 \
    --shapes 64:2048:0,64:2048:1,128:2048:0,128:2048:1 --impls $impls 2>&1 | grep -v Warn | sed "s/^/$v: /"
done
echo "done ${SECONDS}s"

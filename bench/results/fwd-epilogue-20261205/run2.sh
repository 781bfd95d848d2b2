#!/usr/bin/env bash
# M = HEAD, EV = out-tiles-in-last-v-stage.patch, EPB = finish-and-next-tile-under-last-pv.patch
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
c=.dev/EV/fa2_cuda_check; mkdir -p /tmp/v
LD_LIBRARY_PATH=.dev/EV $c small /d128 > /tmp/v/small 2>&1 &
LD_LIBRARY_PATH=.dev/EV $c full /d128 > /tmp/v/full 2>&1 &
LD_LIBRARY_PATH=.dev/EV timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $c small /d128 > /tmp/v/racecheck 2>&1 &
LD_LIBRARY_PATH=.dev/EV timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $c small /d128 > /tmp/v/memcheck 2>&1 &
wait
for f in small full memcheck racecheck; do echo "== EV $f: $(grep -E 'cases failed|ERROR SUMMARY|RACECHECK SUMMARY' /tmp/v/$f | tail -2 | tr '\n' ' ')"; done
echo "checks done ${SECONDS}s"
FA2_BENCH_FWD=1 backends/cuda/tools/compare_builds.sh "1024,2048,4096" "128" .dev/M .dev/EV .dev/EPB 2>&1 | tail -7
echo "compare done ${SECONDS}s"
export PYTHONPATH=python:bench
for v in M EV; do
  impls=fa2; [[ $v == M ]] && impls=fa2,cudnn
  FA2_LIBRARY=.dev/$v/libfa2.so python3 bench/power_probe.py --modes fwd --seconds 2.5 \
    --shapes 128:2048:0,128:2048:1 --impls $impls 2>&1 | grep -v Warn | sed "s/^/$v: /"
done
echo "done ${SECONDS}s"

#!/usr/bin/env bash
# M = HEAD, EPA = finish-under-last-pv.patch, EPB = finish-and-next-tile-under-last-pv.patch
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
for v in EPB EPA; do
  for d in 64 128 256; do
    [[ $v == EPA && $d != 128 ]] && continue
    echo "== $v small /d$d $(LD_LIBRARY_PATH=.dev/$v .dev/$v/fa2_cuda_check small /d$d 2>&1 | grep -E 'cases failed' | tail -1)"
  done
done
echo "checks done ${SECONDS}s"
FA2_BENCH_FWD=1 backends/cuda/tools/compare_builds.sh "1024,2048,4096" "64,128" .dev/M .dev/EPA .dev/EPB 2>&1 | tail -25
echo "compare done ${SECONDS}s"
export PYTHONPATH=python:bench
for v in M EPB EPA; do
  impls=fa2; [[ $v == M ]] && impls=fa2,cudnn
  FA2_LIBRARY=.dev/$v/libfa2.so python3 bench/power_probe.py --modes fwd --seconds 2.5 \
    --shapes 128:2048:0,64:2048:0,128:2048:1 --impls $impls 2>&1 | grep -v Warn | sed "s/^/$v: /"
done
echo "done ${SECONDS}s"

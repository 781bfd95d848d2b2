#!/usr/bin/env bash
# 2026-12-06 session 08:31 call 6: the sm80 backward's next-block copy sources worked out
# before the iteration's first barrier (P) instead of after it (B = HEAD 8c5a6e1).
# FA2_CUDA_PATH=sm80; builds of head dims 64 / 128 / 256.
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/bw.txz -C .dev/bw
export FA2_CUDA_PATH=sm80 PYTHONPATH=python:bench
D=.dev/bw
echo "== events t=${SECONDS}s"
timeout 150 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192,16384" "64" $D/B $D/P 2>&1 | tee $R/ab64.txt
timeout 150 backends/cuda/tools/compare_builds.sh "2048,8192,16384" "128,256" $D/P $D/B 2>&1 | tee $R/ab128-256.txt
echo "== sustained t=${SECONDS}s"
for lib in P B; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 60 python3 bench/power_probe.py --modes bwd --shapes 64:8192:0,64:16384:0 --impls fa2_sm80,flash --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^bwd"
done
echo "== correctness P t=${SECONDS}s"
for d in 64 256; do
  LD_LIBRARY_PATH=$D/P timeout 80 $D/P/fa2_cuda_check small /d$d > $R/small-P-$d.txt 2>&1; echo "small P d$d rc $?: $(tail -n 1 $R/small-P-$d.txt)"
done
echo "done ${SECONDS}s"

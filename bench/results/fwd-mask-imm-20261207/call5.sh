#!/usr/bin/env bash
# 2026-12-07 09:00– session: FN (committed form) against F1 (HEAD) where call1 / call2 saw d128
# -0.8% at 8k without a mask (the d128 loop moved too) and call4's short side by side read d128
# 8k-16k at 0.93-0.94 of cuDNN: CUDA events at 8k / 16k, sustained, and the side by side of both.
set -u
R=$OUT
D=.dev
for c in c5 c12; do tar xJf $D/carry/$c.txz -C $D; done
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python:bench
FA2_BENCH_FWD=1 timeout 90 backends/cuda/tools/compare_builds.sh "4096,8192,16384" "128,256" \
  $D/F1 $D/FN 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in FN F1 FN F1; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 50 python3 bench/power_probe.py --modes fwd \
    --shapes 128:8192:0,128:16384:0 --impls fa2,cudnn --seconds 2.5 2>&1 | grep -E "^fwd"
done 2>&1 | tee $R/sustained.txt
echo "== sxs t=${SECONDS}s"
for lib in F1 FN; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 60 python3 bench/sdpa_side_by_side.py --dtypes bf16 \
    --head-dims 128 --causal 0 --seqlens 4096,8192,16384 --modes fwd --impls fa2,cudnn \
    --warmup 10 --rep 40 --rounds 2 2>&1 | grep -E "^bf16"
done 2>&1 | tee $R/sxs.txt
echo "done ${SECONDS}s"

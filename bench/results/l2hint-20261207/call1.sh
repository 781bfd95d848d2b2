#!/usr/bin/env bash
# 2026-12-07 session: the sm80 d64 backward's cp.async copies with the L2::128B hint (V1.patch,
# EXPERIMENT) against HEAD's kernels (F1). ncu showed 6 of its 8 next-Q / dO copies at 10.5 shared
# wavefronts for 4 (83 M excess a run at 8k), `flash`'s hinted ones at 4.
set -u
R=$OUT
tar xJf .dev/carry/c5.txz -C .dev && tar xJf .dev/carry/c7.txz -C .dev
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export FA2_CUDA_PATH=sm80 PYTHONPATH=python:bench
D=.dev
LD_LIBRARY_PATH=$D/V1 timeout 40 $D/V1/fa2_cuda_check small /d64 > $R/small-V1.txt 2>&1
echo "small V1 d64 rc $?: $(tail -n 1 $R/small-V1.txt)"
echo "== events t=${SECONDS}s"
timeout 50 backends/cuda/tools/compare_builds.sh "8192,16384" "64" $D/F1 $D/V1 \
  2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in V1 F1; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 30 python3 bench/power_probe.py --modes bwd \
    --shapes 64:8192:0,64:16384:0 --impls fa2_sm80,flash --seconds 2.5 2>&1 | grep -E "^bwd"
done
if [[ -z ${SKIP_NCU:-} ]]; then
  echo "== ncu t=${SECONDS}s"
  OUT=$R/V1 timeout 100 backends/cuda/tools/profile_vs_peers.sh $D/V1 64 8192 0 bwd fa2_sm80 \
    > $R/ncu-V1.txt 2>&1
  head -n 30 $R/ncu-V1.txt
fi
echo "done ${SECONDS}s"

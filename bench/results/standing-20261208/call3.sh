#!/usr/bin/env bash
# For the next session (not run here), ~450 s: HEAD's standing (K2 = d4fea4b's kernels, d64 /
# d128 / d256, in .dev/carry/c26.txz with D1; F4 = the kernels before it, c24.txz) on the card
# lent, the H200 if it comes: conformance and `small` of K2 beside memcheck of its d128, the bf16
# side by side with every SDPA peer, CUDA events of F4 against K2 at 512-8k, and sustained probes
# at the points below target. Rebuild if .dev is gone: `build_variant.sh - .dev/K2 "64;128;256"`
# on HEAD, `build_variant.sh - .dev/F4 "64;128;256"` on 51d27b5.
set -u
R=$OUT
L=$R/log.txt
tar xJf .dev/carry/c24.txz -C .dev
tar xJf .dev/carry/c26.txz -C .dev
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader | tee $L
F=.dev/F4 K=.dev/K2
LD_LIBRARY_PATH=$K timeout 170 $K/fa2_conformance --gtest_filter='*cuda*' > $R/conf-K2.txt 2>&1 &
for d in 64 128 256; do
  LD_LIBRARY_PATH=$K timeout 170 $K/fa2_cuda_check small /d$d > /tmp/small-K2-d$d.txt 2>&1 &
done
LD_LIBRARY_PATH=$K timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 \
  $K/fa2_cuda_check small /d128 > /tmp/mem-K2-d128.txt 2>&1 &
wait
summary() { echo "$(grep -E 'cases failed' $1 | tr '\n' ' ')$(grep -E 'SUMMARY' $1) $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]' $1 | tr '\n' ' ')"; }
for d in 64 128 256; do echo "K2 small /d$d: $(summary /tmp/small-K2-d$d.txt)"; done | tee -a $L
echo "K2 conformance: $(summary $R/conf-K2.txt)" | tee -a $L
echo "K2 memcheck small /d128: $(summary /tmp/mem-K2-d128.txt) ${SECONDS}s" | tee -a $L
export FA2_LIBRARY=$K/libfa2.so PYTHONPATH=python:bench
mkdir -p $R/bf16
timeout 150 python3 bench/sdpa_side_by_side.py --dtypes bf16 \
  --head-dims 64,128,256 --modes fwd,bwd --impls fa2,fa2_sm80,flash,cudnn \
  --warmup 10 --rep 40 --rounds 2 --out $R/bf16 > $R/bf16/sxs-bf16.txt 2>&1
echo "sxs rc $? ${SECONDS}s" | tee -a $L
timeout 60 backends/cuda/tools/compare_builds.sh "512,2048,8192" "64,128" $F $K 2>&1 | tee -a $L
probe() { timeout 60 python3 bench/power_probe.py --seconds 2.5 "$@" 2>&1 | grep -v Warn; }
{
probe --modes fwd --impls fa2,cudnn --shapes 64:2048:0,64:2048:1
probe --modes bwd --impls fa2,cudnn --shapes 128:2048:0,128:4096:0
probe --modes bwd --impls fa2_sm80,flash --shapes 64:8192:0,64:16384:0
} >> $L
echo "done ${SECONDS}s" | tee -a $L
cat $L

#!/usr/bin/env bash
# call 1: sm80 epilogue stmatrix A/B (H6 = HEAD b4c681f, E6 = + epi-stsm.patch), then E6's sm80-path verification.
set -u
R=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader | tee $R/gpu.txt
for round in 1 2; do for dir in .dev/H6 .dev/E6; do
  echo "== $dir" >> $R/ab1-raw.txt
  FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$dir timeout 60 $dir/fa2_cuda_check bench 512,2048,8192 64,128,256 >> $R/ab1-raw.txt 2>&1
done; done
echo "ab1 done ${SECONDS}s"
mkdir -p $R/v
OUT=$R/v FA2_VERIFY_PATHS=sm80 timeout 240 backends/cuda/tools/verify_on_gpu.sh .dev/E6v quick > $R/verify-E6.txt 2>&1
echo "verify done ${SECONDS}s"
cat $R/verify-E6.txt

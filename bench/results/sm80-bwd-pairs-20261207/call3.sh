#!/usr/bin/env bash
# call2.sh in the device time left (~370 s): without the H200 standing, the checks side by side.
set -u
R=$OUT
tar xJf .dev/carry/c15.txz -C .dev && tar xJf .dev/carry/c18.txz -C .dev
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/log.txt
D=.dev
for d in 64 128 256; do
  LD_LIBRARY_PATH=$D/F3 timeout 60 $D/F3/fa2_cuda_check small /d$d > /tmp/small-$d.txt 2>&1 &
done
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$D/F3 timeout 60 $D/F3/fa2_cuda_check small /d128 \
  > /tmp/small-sm80.txt 2>&1 &
LD_LIBRARY_PATH=$D/F3 timeout 120 $D/F3/fa2_conformance --gtest_filter='*cuda*' > /tmp/conf.txt 2>&1 &
wait
for d in 64 128 256; do echo "small F3 d$d: $(grep -E 'cases failed' /tmp/small-$d.txt)"; done |
  tee -a $R/log.txt
echo "small F3 sm80 d128: $(grep -E 'cases failed' /tmp/small-sm80.txt)" | tee -a $R/log.txt
echo "conformance F3: $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/conf.txt | tr '\n' ' ') t=${SECONDS}s" |
  tee -a $R/log.txt
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$D/F3 timeout 60 compute-sanitizer --tool memcheck \
  $D/F3/fa2_cuda_check small /d128 > /tmp/memcheck.txt 2>&1
echo "memcheck sm80 d128 rc $?: $(grep -E 'ERROR SUMMARY|cases failed' /tmp/memcheck.txt |
  tr '\n' ' ') t=${SECONDS}s" | tee -a $R/log.txt
echo "== events, Hopper path t=${SECONDS}s" | tee -a $R/log.txt
timeout 50 backends/cuda/tools/compare_builds.sh "4096,16384" "64,128" $D/F2 $D/F3 \
  2>&1 | tee -a $R/log.txt
echo "done ${SECONDS}s" | tee -a $R/log.txt

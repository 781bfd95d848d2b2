#!/usr/bin/env bash
# 2026-12-07 15:54– session: the shipped form (P2-shipped.patch = F3: the paired dQ layout at d128
# only, sm_90 code; its d64 / d128 backward kernels' SASS is F2's / P1's, byte for byte) checked on
# both paths, and the Hopper backward's row kernels (delta / convert, changed for every path)
# timed against F2. On the H200 HEAD's standing first (standing-20261207d/call.sh).
set -u
R=$OUT
if [[ $(nvidia-smi --query-gpu=name --format=csv,noheader) == *H200* ]]; then
  OUT=$R/standing bash bench/results/standing-20261207d/call.sh > /tmp/standing.txt 2>&1
  head -n 30 /tmp/standing.txt
fi
tar xJf .dev/carry/c15.txz -C .dev && tar xJf .dev/carry/c18.txz -C .dev
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/log.txt
D=.dev
for d in 64 128 256; do
  LD_LIBRARY_PATH=$D/F3 timeout 60 $D/F3/fa2_cuda_check small /d$d > /tmp/small-$d.txt 2>&1
  echo "small F3 d$d rc $?: $(grep -E 'cases failed' /tmp/small-$d.txt)" | tee -a $R/log.txt
done
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$D/F3 timeout 60 $D/F3/fa2_cuda_check small /d128 \
  > /tmp/small-sm80.txt 2>&1
echo "small F3 sm80 d128 rc $?: $(grep -E 'cases failed' /tmp/small-sm80.txt)" | tee -a $R/log.txt
LD_LIBRARY_PATH=$D/F3 timeout 150 $D/F3/fa2_conformance --gtest_filter='*cuda*' > /tmp/conf.txt 2>&1
echo "conformance F3 rc $?: $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/conf.txt | tr '\n' ' ')" |
  tee -a $R/log.txt
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$D/F3 timeout 120 compute-sanitizer --tool memcheck \
  $D/F3/fa2_cuda_check small /d128 > /tmp/memcheck.txt 2>&1
echo "memcheck sm80 d128 rc $?: $(grep -E 'ERROR SUMMARY|cases failed' /tmp/memcheck.txt |
  tr '\n' ' ') t=${SECONDS}s" | tee -a $R/log.txt
echo "== events, Hopper path t=${SECONDS}s" | tee -a $R/log.txt
timeout 80 backends/cuda/tools/compare_builds.sh "1024,4096,16384" "64,128" $D/F2 $D/F3 \
  2>&1 | tee -a $R/log.txt
echo "done ${SECONDS}s" | tee -a $R/log.txt

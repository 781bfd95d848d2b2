#!/usr/bin/env bash
# Second call (~120 s): K2 = HEAD d4fea4b's code (call.sh's K1 with the key counts at d128 only;
# d64 converts after the grid, both as programmatic dependents), in c26.txz; F4 (HEAD before it)
# in c24.txz: conformance and `small` d64 / d128 of K2, then CUDA events of F4
# and K2 alternated at 512 / 2k.
set -u
R=$OUT
L=$R/log2.txt
tar xJf .dev/carry/c24.txz -C .dev
tar xJf .dev/carry/c26.txz -C .dev
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $L
F=.dev/F4 K=.dev/K2
LD_LIBRARY_PATH=$K timeout 100 $K/fa2_conformance --gtest_filter='*cuda*' > $R/conf-K2.txt 2>&1 &
for d in 64 128; do
  LD_LIBRARY_PATH=$K timeout 100 $K/fa2_cuda_check small /d$d > /tmp/small-K2-d$d.txt 2>&1 &
done
wait
summary() { echo "$(grep -E 'cases failed' $1 | tr '\n' ' ')$(grep -E 'SUMMARY' $1) $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]' $1 | tr '\n' ' ')"; }
for d in 64 128; do echo "K2 small /d$d: $(summary /tmp/small-K2-d$d.txt)"; done | tee -a $L
echo "K2 conformance: $(summary $R/conf-K2.txt)" | tee -a $L
echo "checks ${SECONDS}s" | tee -a $L
timeout 35 backends/cuda/tools/compare_builds.sh "512,2048" "64,128" $F $K 2>&1 | tee -a $L
echo "done ${SECONDS}s" | tee -a $L

#!/usr/bin/env bash
# 2026-12-06 session 05:38 call 6: HEAD 296b107 (all head dims, sm_90a), conformance on both paths.
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
L=.dev/s10
LD_LIBRARY_PATH=$L timeout 110 $L/fa2_conformance --gtest_filter='*cuda*' > $R/conf.txt 2>&1; echo default rc $? t=${SECONDS}s; tail -n 1 $R/conf.txt; grep -E "FAILED" $R/conf.txt | head -5
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$L timeout 110 $L/fa2_conformance --gtest_filter='*cuda*' > $R/conf-sm80.txt 2>&1; echo sm80 rc $? t=${SECONDS}s; tail -n 1 $R/conf-sm80.txt; grep -E "FAILED" $R/conf-sm80.txt | head -5

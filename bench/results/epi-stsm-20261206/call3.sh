#!/usr/bin/env bash
# call 3: the committed 0553517's kernels (F7) through the conformance suite on both paths.
set -u
R=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
LD_LIBRARY_PATH=.dev/F7 timeout 150 .dev/F7/fa2_conformance --gtest_filter='*cuda*' > $R/conf-default.txt 2>&1; echo "default rc $?"; tail -n 3 $R/conf-default.txt
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=.dev/F7 timeout 150 .dev/F7/fa2_conformance --gtest_filter='*cuda*' > $R/conf-sm80.txt 2>&1; echo "sm80 rc $?"; tail -n 3 $R/conf-sm80.txt
echo "done ${SECONDS}s"

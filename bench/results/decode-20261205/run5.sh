#!/usr/bin/env bash
# The committed tree (G): the conformance suite on the default path (the bad-input case now has a
# forward that needs a workspace on a GPU, so its workspace refusals run) and the Python tests on CUDA.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/gpu.txt
B=.dev/s3/G
LD_LIBRARY_PATH=$B timeout 150 $B/fa2_conformance --gtest_filter='*cuda*' > $OUT/conformance-default.log 2>&1; echo "conformance rc=$?"
grep -E "^\[  PASSED|^\[  FAILED|SKIPPED" $OUT/conformance-default.log | head
grep -E "cuda_fwd_workspace" $OUT/conformance-default.log | head
FA2_LIBRARY=$B/libfa2.so timeout 300 python3 -m pytest -q -rs python/tests > $OUT/pytest.log 2>&1; echo "pytest rc=$?"
tail -n 8 $OUT/pytest.log
echo "done ${SECONDS}s"

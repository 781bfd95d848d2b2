#!/usr/bin/env bash
# The split-KV decoding forward (D1) checked and timed: conformance on both paths, the sanitizers on
# the decode grid's cases, then the decode grid against HEAD (VF) and SDPA flash / cudnn.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
B=.dev/s3/D1
export LD_LIBRARY_PATH=$B PYTHONPATH=python
echo "== conformance default path, t=${SECONDS}s"
timeout 200 $B/fa2_conformance --gtest_filter='*cuda*' 2>&1 | grep -E "FAILED|PASSED|Failure" | head -20
echo "== conformance sm80 path, t=${SECONDS}s"
FA2_CUDA_PATH=sm80 timeout 200 $B/fa2_conformance --gtest_filter='*cuda*' 2>&1 | grep -E "FAILED|PASSED|Failure" | head -20
echo "== memcheck decode, t=${SECONDS}s"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/fa2_conformance --gtest_filter='Decode/*cuda*' 2>&1 | tail -n 4
echo "rc=$?"
echo "== racecheck decode, t=${SECONDS}s"
timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $B/fa2_conformance --gtest_filter='Decode/*cuda*:-*_bwd' 2>&1 | tail -n 4
echo "== decode grid, t=${SECONDS}s"
FA2_LIBRARY=.dev/s3/H/libfa2.so timeout 120 python3 bench/sdpa_side_by_side.py --decode --impls fa2,flash,cudnn --out $OUT/vf 2>&1 | grep -E "^ +[0-9]" | grep fa2 | sed 's/^/HEAD /'
FA2_LIBRARY=$B/libfa2.so timeout 150 python3 bench/sdpa_side_by_side.py --decode --impls fa2,flash,cudnn --out $OUT/d1 2>&1 | tail -n 45
echo "done ${SECONDS}s"

#!/usr/bin/env bash
# The combine with parts across warps (I): decode conformance and the sanitizers, then the probe and
# the decode grid next to flash / cudnn.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/gpu.txt
B=.dev/s3/I
export PYTHONPATH=python
(
  export LD_LIBRARY_PATH=$B
  timeout 120 $B/fa2_conformance --gtest_filter='Decode/*cuda*:Api/*cuda*:*ValidCall*cuda*:Varlen/*cuda*' > $OUT/conformance.log 2>&1; echo "conformance rc=$?"
  FA2_CUDA_PATH=sm80 timeout 120 $B/fa2_conformance --gtest_filter='Decode/*cuda*' > $OUT/conformance-sm80.log 2>&1; echo "conformance sm80 rc=$?"
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B/fa2_conformance --gtest_filter='Decode/*cuda*' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"
  timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $B/fa2_conformance --gtest_filter='Decode/*cuda*' > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?"
  for f in conformance conformance-sm80 memcheck racecheck; do
    echo "$f: $(grep -E '^\[  PASSED|^\[  FAILED|ERROR SUMMARY|RACECHECK SUMMARY' $OUT/$f.log | tr '\n' ' ')"
  done
)
FA2_LIBRARY=$B/libfa2.so timeout 200 python3 bench/decode_probe.py 2>&1 | grep -v -i warn | tee $OUT/decode_probe.txt
FA2_LIBRARY=$B/libfa2.so timeout 100 python3 bench/sdpa_side_by_side.py --decode --impls fa2,flash,cudnn --out $OUT/grid 2>&1 | grep -E "^ +[0-9]" | sort -u -k1,1n -k2,2n -k3,3 | tee $OUT/decode-grid.txt
echo "done ${SECONDS}s"

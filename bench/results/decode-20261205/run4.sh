#!/usr/bin/env bash
# The split-KV decoding forward as committed (F, all head dims): conformance on both paths, memcheck
# and racecheck on the decode cases, then the decode grid twice next to SDPA flash / cudnn and
# HEAD before it (H).
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/gpu.txt
B=.dev/s3/F
export PYTHONPATH=python
(
  export LD_LIBRARY_PATH=$B
  echo "== conformance default path, t=${SECONDS}s"
  timeout 150 $B/fa2_conformance --gtest_filter='*cuda*' > $OUT/conformance-default.log 2>&1; echo "rc=$?"
  echo "== conformance sm80 path, t=${SECONDS}s"
  FA2_CUDA_PATH=sm80 timeout 150 $B/fa2_conformance --gtest_filter='*cuda*' > $OUT/conformance-sm80.log 2>&1; echo "rc=$?"
  echo "== memcheck decode, t=${SECONDS}s"
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B/fa2_conformance --gtest_filter='Decode/*cuda*' > $OUT/memcheck-decode.log 2>&1; echo "rc=$?"
  echo "== racecheck decode, t=${SECONDS}s"
  timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $B/fa2_conformance --gtest_filter='Decode/*cuda*' > $OUT/racecheck-decode.log 2>&1; echo "rc=$?"
  for f in conformance-default conformance-sm80 memcheck-decode racecheck-decode; do
    echo "$f: $(grep -E '^\[  PASSED|^\[  FAILED|ERROR SUMMARY|RACECHECK SUMMARY' $OUT/$f.log | tr '\n' ' ')"
  done
)
for round in 1 2; do
  order="F H"; [[ $round == 2 ]] && order="H F"
  for b in $order; do
    lib=$B/libfa2.so; [[ $b == H ]] && lib=.dev/s3/H/libfa2.so
    echo "== round $round $b, t=${SECONDS}s"
    FA2_LIBRARY=$lib timeout 100 python3 bench/sdpa_side_by_side.py --decode --impls fa2,flash,cudnn --out $OUT/$b-$round 2>&1 | grep -E "^ +[0-9]" | sort -u -k1,1n -k2,2n -k3,3 | sed "s/^/$b /" | tee -a $OUT/decode-grid.txt
  done
done
echo "done ${SECONDS}s"

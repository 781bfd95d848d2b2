#!/usr/bin/env bash
# Decoding: racecheck of D1's decode cases; then the d128 decoding plan's pipeline depth: D2 (one
# stage, 128 keys: D1's plan, plus the occupancy cache), D3 (three stages of 64 keys), D4 (two
# stages of 128 keys), each on the decode grid with flash / cudnn, two rounds in rotated order; the
# decode conformance cases (d128) and memcheck on D3 and D4.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export PYTHONPATH=python
echo "== racecheck D1 decode, t=${SECONDS}s"
LD_LIBRARY_PATH=.dev/s3/D1 timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 .dev/s3/D1/fa2_conformance --gtest_filter='Decode/*cuda*' 2>&1 | tail -n 3
for b in D3 D4; do
  echo "== $b conformance + memcheck decode, t=${SECONDS}s"
  LD_LIBRARY_PATH=.dev/s3/$b timeout 60 .dev/s3/$b/fa2_conformance --gtest_filter='Decode/*cuda*' 2>&1 | grep -E "PASSED|FAILED|Failure" | head -5
  LD_LIBRARY_PATH=.dev/s3/$b timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 .dev/s3/$b/fa2_conformance --gtest_filter='Decode/*cuda*' 2>&1 | tail -n 1
done
for round in 1 2; do
  order="D2 D3 D4"; [[ $round == 2 ]] && order="D4 D3 D2"
  for b in $order; do
    echo "== round $round $b, t=${SECONDS}s"
    FA2_LIBRARY=.dev/s3/$b/libfa2.so timeout 100 python3 bench/sdpa_side_by_side.py --decode --impls fa2,flash,cudnn --out $OUT/$b-$round 2>&1 | grep -E "^ +[0-9]" | sort -u -k1,1n -k2,2n -k3,3 | sed "s/^/$b /"
  done
done
echo "done ${SECONDS}s"

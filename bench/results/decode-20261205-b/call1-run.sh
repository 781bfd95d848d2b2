#!/usr/bin/env bash
# Call 1: the new decode kernel (N: warps split each key block) — conformance on both paths,
# memcheck / racecheck on the Decode cases; the d128 decode grid for A (HEAD), L (HEAD + idle warps
# skip Q K^T), N, V2 (N, d128 {16,64,128,4,3}), V3 (N, d128 8 warps), flash / cudnn beside A and N.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/gpu.txt
export PYTHONPATH=python
C=.dev/s4/N/fa2_conformance
echo "== conformance default t=${SECONDS}s"
LD_LIBRARY_PATH=.dev/s4/N timeout 120 $C --gtest_filter='*cuda*' > $OUT/conf-default.txt 2>&1; echo rc $?; tail -n 8 $OUT/conf-default.txt; grep -E "Failure|FAILED" $OUT/conf-default.txt | head -20
echo "== conformance sm80 t=${SECONDS}s"
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=.dev/s4/N timeout 120 $C --gtest_filter='*cuda*' > $OUT/conf-sm80.txt 2>&1; echo rc $?; tail -n 3 $OUT/conf-sm80.txt; grep -E "FAILED" $OUT/conf-sm80.txt | head -20
echo "== memcheck t=${SECONDS}s"
LD_LIBRARY_PATH=.dev/s4/N timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $C --gtest_filter='Decode/*cuda*' > $OUT/memcheck.txt 2>&1; echo rc $?; tail -n 2 $OUT/memcheck.txt
echo "== racecheck t=${SECONDS}s"
LD_LIBRARY_PATH=.dev/s4/N timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $C --gtest_filter='Decode/*cuda*' > $OUT/racecheck.txt 2>&1; echo rc $?; tail -n 2 $OUT/racecheck.txt
for b in A N V2; do
  [[ $SECONDS -gt 500 ]] && { echo "skip $b (time)"; continue; }
  impls=fa2; [[ $b == A || $b == N ]] && impls=fa2,flash,cudnn
  echo "== grid $b t=${SECONDS}s"
  FA2_LIBRARY=.dev/s4/$b/libfa2.so timeout 100 python3 bench/sdpa_side_by_side.py --decode --impls $impls --out $OUT/$b > $OUT/grid-$b.log 2>&1
  grep -E "^ +[0-9]" $OUT/grid-$b.log | sort -u -k1,1n -k2,2n -k3,3 | sed "s/^/$b /" | tee -a $OUT/grid.txt
done
echo "done ${SECONDS}s"

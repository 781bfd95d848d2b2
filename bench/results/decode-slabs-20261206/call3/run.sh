#!/usr/bin/env bash
# 2026-12-06 session 05:38 call 3. F = working tree (all head dims, sm_90a): two-slab decoding
# items with the split rule of sm80/tile_plan.h (kDecodeSlabSplitMinBlocks).
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python
F=.dev/s8/F; C=$F/fa2_conformance
echo "== conformance t=${SECONDS}s"
LD_LIBRARY_PATH=$F timeout 150 $C --gtest_filter='*cuda*' > $R/conf.txt 2>&1; echo rc $?; tail -n 1 $R/conf.txt; grep -E "FAILED|Failure" $R/conf.txt | head
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$F timeout 60 $C --gtest_filter='Decode/*cuda*' > $R/conf-sm80.txt 2>&1; echo sm80 rc $?; tail -n 1 $R/conf-sm80.txt
echo "== sanitizers t=${SECONDS}s"
LD_LIBRARY_PATH=$F timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $C --gtest_filter='Decode/*cuda*' > $R/memcheck.txt 2>&1; echo memcheck rc $?; tail -n 2 $R/memcheck.txt
LD_LIBRARY_PATH=$F timeout 110 compute-sanitizer --tool racecheck --error-exitcode 9 $C --gtest_filter='Decode/*cuda*' > $R/racecheck.txt 2>&1; echo racecheck rc $?; tail -n 2 $R/racecheck.txt
echo "== pytest t=${SECONDS}s"
FA2_LIBRARY=$F/libfa2.so timeout 60 python3 -m pytest -q -x python/tests 2>&1 | tail -n 2 | tee $R/pytest.txt
echo "== grids t=${SECONDS}s"
for q in "128 8" "64 8" "128 16"; do
  set -- $q
  [[ $SECONDS -gt 520 ]] && break
  FA2_LIBRARY=$F/libfa2.so timeout 60 python3 bench/sdpa_side_by_side.py --decode --decode-head-dim $1 --decode-queries $2 --impls fa2,cudnn,flash --out $R/q$2-d$1 > $R/grid-q$2-d$1.log 2>&1
  grep -E "^ +[0-9]" $R/grid-q$2-d$1.log | sort -u -k1,1n -k2,2n -k3,3 | sed "s/^/q$2-d$1 /" >> $R/grid.txt
done
awk '{printf "%s %s %s %s %s\n", $1, $2, $3, $4, $5}' $R/grid.txt | paste - - - | awk '{print $1, $2, $3, $4"/"$9"/"$14, "fa2", $10, "cudnn", $5, "flash", $15, "fa2/cudnn", sprintf("%.2f", $10/$5)}'
echo "done ${SECONDS}s"

#!/usr/bin/env bash
# 2026-12-06 call 2. N = working tree (all head dims, sm_90a): query heads folded for drafted
# tokens too, the combine loading parts with the lse, d64 decode plan {16,128,64,4,3}.
# D = HEAD + d32 / d96 decode plans of three stages (d32;96 only).
# X0 = 2026-12-06 call 1's X0 (a7b7cf5 + the d64 plan; one-token fold only).
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python
C=.dev/s7/N/fa2_conformance; L=.dev/s7/N
echo "== conformance t=${SECONDS}s"
LD_LIBRARY_PATH=$L timeout 150 $C --gtest_filter='*cuda*' > $R/conf.txt 2>&1; echo rc $?; tail -n 1 $R/conf.txt; grep -E "FAILED|Failure" $R/conf.txt | head
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$L timeout 60 $C --gtest_filter='Decode/*cuda*' > $R/conf-sm80.txt 2>&1; echo sm80 rc $?; tail -n 1 $R/conf-sm80.txt
echo "== sanitizers t=${SECONDS}s"
LD_LIBRARY_PATH=$L timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $C --gtest_filter='Decode/*cuda*' > $R/memcheck.txt 2>&1; echo memcheck rc $?; tail -n 2 $R/memcheck.txt
LD_LIBRARY_PATH=$L timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $C --gtest_filter='Decode/*cuda*' > $R/racecheck.txt 2>&1; echo racecheck rc $?; tail -n 2 $R/racecheck.txt
grid() {  # build dir, head dim, queries, impls, tag
  [[ $SECONDS -gt 300 ]] && { echo "skip $5 (time)"; return; }
  FA2_LIBRARY=$1/libfa2.so timeout 45 python3 bench/sdpa_side_by_side.py --decode --decode-head-dim $2 --decode-queries $3 --impls $4 --out $R/$5 > $R/grid-$5.log 2>&1
  grep -E "^ +[0-9]" $R/grid-$5.log | sort -u -k1,1n -k2,2n -k3,3 | sed "s/^/$5 /" >> $R/grid.txt
}
echo "== grids t=${SECONDS}s"
grid .dev/s7/N 128 4 fa2,cudnn,flash q4-d128-N
grid .dev/s6/X0 128 4 fa2 q4-d128-X0
grid .dev/s7/N 128 1 fa2,cudnn,flash q1-d128-N
grid .dev/s6/X0 128 1 fa2 q1-d128-X0
grid .dev/s7/N 64 1 fa2,cudnn,flash q1-d64-N
grid .dev/s6/X0 64 1 fa2 q1-d64-X0
grid .dev/s7/N 128 8 fa2,cudnn,flash q8-d128-N
grid .dev/s6/X0 128 8 fa2 q8-d128-X0
grid .dev/s7/N 64 4 fa2,cudnn,flash q4-d64-N
grid .dev/s6/X0 64 4 fa2 q4-d64-X0
LD_LIBRARY_PATH=.dev/s7/D timeout 40 .dev/s7/D/fa2_conformance --gtest_filter='Decode/*cuda*_d32_*:Decode/*cuda*_d96_*' > $R/conf-D.txt 2>&1; echo D conformance rc $?; tail -n 1 $R/conf-D.txt
for dim in 32 96; do grid .dev/s7/N $dim 1 fa2 q1-d$dim-N; grid .dev/s7/D $dim 1 fa2 q1-d$dim-D; grid .dev/s7/N $dim 1 fa2,cudnn q1-d$dim-N2; grid .dev/s7/D $dim 1 fa2 q1-d$dim-D2; done
echo "== pytest t=${SECONDS}s"
[[ $SECONDS -lt 320 ]] && FA2_LIBRARY=$L/libfa2.so timeout 60 python3 -m pytest -q -x python/tests 2>&1 | tail -n 2 | tee $R/pytest.txt
python3 - $R/grid.txt <<'PY'
import sys, collections
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.split()
    tag, b, kv, impl, us = f[0], f[1], f[2], f[3], f[4]
    q, d, build = tag.split("-")
    rows[(q, d, int(b), int(kv))][impl if impl != "fa2" else build] = float(us)
for key in sorted(rows):
    r = rows[key]
    print(*key, "  ".join("%s %.1f" % (k, v) for k, v in sorted(r.items())),
          " N/cudnn %.2f" % (r["N"] / r["cudnn"]) if "N" in r and "cudnn" in r else "")
PY
echo "done ${SECONDS}s"

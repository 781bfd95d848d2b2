#!/usr/bin/env bash
# 2026-12-06 session 05:38 call 1. N = working tree (all head dims, sm_90a): decoding items of two
# 16-row slabs (32 rows) where a call has more than 16 (folded) rows. B = HEAD e0f3a8e (d64;128).
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python
N=.dev/s8/N; B=.dev/s8/B; C=$N/fa2_conformance
echo "== conformance t=${SECONDS}s"
LD_LIBRARY_PATH=$N timeout 150 $C --gtest_filter='*cuda*' > $R/conf.txt 2>&1; echo rc $?; tail -n 1 $R/conf.txt; grep -E "FAILED|Failure" $R/conf.txt | head
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$N timeout 60 $C --gtest_filter='Decode/*cuda*' > $R/conf-sm80.txt 2>&1; echo sm80 rc $?; tail -n 1 $R/conf-sm80.txt
grid() {  # build dir, head dim, queries, impls, tag
  [[ $SECONDS -gt 420 ]] && { echo "skip $5 (time)"; return; }
  FA2_LIBRARY=$1/libfa2.so timeout 45 python3 bench/sdpa_side_by_side.py --decode --decode-head-dim $2 --decode-queries $3 --impls $4 --out $R/$5 > $R/grid-$5.log 2>&1
  grep -E "^ +[0-9]" $R/grid-$5.log | sort -u -k1,1n -k2,2n -k3,3 | sed "s/^/$5 /" >> $R/grid.txt
}
echo "== grids t=${SECONDS}s"
grid $N 128 8 fa2,cudnn,flash q8-d128-N
grid $B 128 8 fa2 q8-d128-B
grid $N 64 8 fa2,cudnn,flash q8-d64-N
grid $B 64 8 fa2 q8-d64-B
grid $N 128 5 fa2 q5-d128-N
grid $B 128 5 fa2 q5-d128-B
grid $N 128 16 fa2 q16-d128-N
grid $B 128 16 fa2 q16-d128-B
grid $B 128 8 fa2 q8-d128-B2
grid $N 128 8 fa2 q8-d128-N2
echo "== sanitizers t=${SECONDS}s"
LD_LIBRARY_PATH=$N timeout 70 compute-sanitizer --tool memcheck --error-exitcode 9 $C --gtest_filter='Decode/*cuda*' > $R/memcheck.txt 2>&1; echo memcheck rc $?; tail -n 2 $R/memcheck.txt
LD_LIBRARY_PATH=$N timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 $C --gtest_filter='Decode/*cuda*' > $R/racecheck.txt 2>&1; echo racecheck rc $?; tail -n 2 $R/racecheck.txt
echo "== pytest t=${SECONDS}s"
[[ $SECONDS -lt 540 ]] && FA2_LIBRARY=$N/libfa2.so timeout 50 python3 -m pytest -q -x python/tests 2>&1 | tail -n 2 | tee $R/pytest.txt
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
          " N/B %.3f" % (r["N"] / r["B"]) if "N" in r and "B" in r else "",
          " N/cudnn %.2f" % (r["N"] / r["cudnn"]) if "N" in r and "cudnn" in r else "")
PY
echo "done ${SECONDS}s"

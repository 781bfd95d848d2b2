#!/usr/bin/env bash
# Call 2 (2026-12-05 23:50– session). F = working tree (all head dims, sm_90a): HEAD + the combine
# launched as the decode kernel's programmatic dependent + the combine loading parts and lse together
# + the d64 decode plan {16,256,64,4,2}. P = HEAD + the dependent launch only (d64;128; HEAD's d64
# plan {16,128,64,4,2}). X0 = P + the d64 plan {16,128,64,4,3}. F: conformance *cuda* (default path),
# memcheck / racecheck on Decode, pytest;
# probe P / F; d64 grid P / X0 / F; d128 grid P / F; peers beside. Results in $OUT/r.tgz.
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python
C=.dev/s6/F/fa2_conformance; L=.dev/s6/F
echo "== conformance default t=${SECONDS}s"
LD_LIBRARY_PATH=$L timeout 120 $C --gtest_filter='*cuda*' > $R/conf-default.txt 2>&1; echo rc $?; tail -n 1 $R/conf-default.txt; grep -E "FAILED|Failure" $R/conf-default.txt | head
echo "== memcheck t=${SECONDS}s"
LD_LIBRARY_PATH=$L timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $C --gtest_filter='Decode/*cuda*' > $R/memcheck.txt 2>&1; echo rc $?; tail -n 2 $R/memcheck.txt
echo "== racecheck t=${SECONDS}s"
LD_LIBRARY_PATH=$L timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $C --gtest_filter='Decode/*cuda*' > $R/racecheck.txt 2>&1; echo rc $?; tail -n 2 $R/racecheck.txt
for b in F P; do
  [[ $b == P && $SECONDS -gt 200 ]] && continue
  echo "== probe $b t=${SECONDS}s"
  FA2_LIBRARY=.dev/s6/$b/libfa2.so timeout 60 python3 bench/decode_probe.py 1:1024 1:4096 1:16384 8:1024 32:16384 >> $R/probe-$b.txt 2>&1
  grep -E "^ +[0-9]" $R/probe-$b.txt | cut -c1-60
done
grid() {  # build dir, head dim, impls, tag
  [[ $SECONDS -gt 300 ]] && { echo "skip $4 (time)"; return; }
  FA2_LIBRARY=$1/libfa2.so timeout 40 python3 bench/sdpa_side_by_side.py --decode --decode-head-dim $2 --impls $3 --out $R/$4 > $R/grid-$4.log 2>&1
  grep -E "^ +[0-9]" $R/grid-$4.log | sort -u -k1,1n -k2,2n -k3,3 | sed "s/^/$4 /" >> $R/grid.txt
}
echo "== d64 t=${SECONDS}s"
for round in 1 2; do
  order="P X0 F"; [[ $round == 2 ]] && order="F X0 P"
  for b in $order; do grid .dev/s6/$b 64 fa2 d64-$b-$round; done
done
grid .dev/s6/F 64 fa2,cudnn,flash d64-Fpeers
echo "== d128 t=${SECONDS}s"
for round in 1 2; do
  order="P F"; [[ $round == 2 ]] && order="F P"
  for b in $order; do grid .dev/s6/$b 128 fa2 d128-$b-$round; done
done
grid .dev/s6/F 128 fa2,cudnn,flash d128-Fpeers
echo "== pytest t=${SECONDS}s"
[[ $SECONDS -lt 300 ]] && FA2_LIBRARY=$L/libfa2.so timeout 100 python3 -m pytest -q -x python/tests 2>&1 | tail -n 3 | tee $R/pytest.txt
grep " fa2 " $R/grid.txt | awk '{split($1,t,"-"); print t[1], $2, $3, t[2] "-" t[3], $5}' | sort -k1,1 -k2,2n -k3,3n -k4,4 > $R/fa2.txt
python3 - $R/fa2.txt <<'PY'
import sys, collections
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    tag, b, kv, build, us = line.split()
    rows[(tag, int(b), int(kv))].setdefault(build.split("-")[0], []).append(float(us))
for key in sorted(rows):
    print(*key, "  ".join("%s %s" % (k, "/".join("%.1f" % x for x in v)) for k, v in sorted(rows[key].items())))
PY
grep -E "cudnn|flash" $R/grid.txt
echo "done ${SECONDS}s"

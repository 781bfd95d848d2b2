#!/usr/bin/env bash
# Call 1 (2026-12-05 23:50– session). H = HEAD (d64;128), P = HEAD + programmatic dependent launch
# of the combine; W1-W3 = d64 decode plans {16,128,64,4,3} / {16,64,64,4,4} / {16,128,64,8,2} (.dev/s4).
# P: conformance *cuda* (default path), memcheck / racecheck on Decode; probe H / P; d64 grid H, W1-3
# (two rounds), fa2_bhsd (fa2 on SDPA's [b,h,s,d] through strides) beside cudnn; d128 grid H / P.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/gpu.txt
export PYTHONPATH=python
C=.dev/s5/P/fa2_conformance
echo "== conformance P default t=${SECONDS}s"
LD_LIBRARY_PATH=.dev/s5/P timeout 150 $C --gtest_filter='*cuda*' > $OUT/conf-default.txt 2>&1; echo rc $?; tail -n 3 $OUT/conf-default.txt; grep -E "FAILED|Failure" $OUT/conf-default.txt | head -20
echo "== memcheck t=${SECONDS}s"
LD_LIBRARY_PATH=.dev/s5/P timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $C --gtest_filter='Decode/*cuda*' > $OUT/memcheck.txt 2>&1; echo rc $?; tail -n 2 $OUT/memcheck.txt
echo "== racecheck t=${SECONDS}s"
LD_LIBRARY_PATH=.dev/s5/P timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $C --gtest_filter='Decode/*cuda*' > $OUT/racecheck.txt 2>&1; echo rc $?; tail -n 2 $OUT/racecheck.txt
for b in H P P H; do
  [[ $SECONDS -gt 330 ]] && { echo "skip probe $b (time)"; continue; }
  echo "== probe $b t=${SECONDS}s"
  FA2_LIBRARY=.dev/s5/$b/libfa2.so timeout 60 python3 bench/decode_probe.py 1:1024 1:4096 8:1024 2>&1 | tee -a $OUT/probe-$b.txt | grep -v "^ *$" | cut -c1-200
done
grid() {  # build dir, head dim, impls, tag
  [[ $SECONDS -gt 540 ]] && { echo "skip $4 (time)"; return; }
  echo "== grid $4 t=${SECONDS}s"
  FA2_LIBRARY=$1/libfa2.so timeout 40 python3 bench/sdpa_side_by_side.py --decode --decode-head-dim $2 --impls $3 --out $OUT/$4 > $OUT/grid-$4.log 2>&1
  grep -E "^ +[0-9]" $OUT/grid-$4.log | sort -u -k1,1n -k2,2n -k3,3 | sed "s/^/$4 /" >> $OUT/grid.txt
}
for round in 1 2; do
  order="H W1 W2 W3"; [[ $round == 2 ]] && order="W3 W2 W1 H"
  for b in $order; do
    dir=.dev/s4/$b; [[ $b == H ]] && dir=.dev/s5/H
    grid $dir 64 fa2 d64-$b-$round
  done
done
grid .dev/s5/H 64 fa2,fa2_bhsd,cudnn,flash d64-Hpeers
grid .dev/s5/H 128 fa2,fa2_bhsd,cudnn d128-Hpeers
grid .dev/s5/P 128 fa2 d128-P
grep " fa2 " $OUT/grid.txt | awk '{split($1,t,"-"); print t[1], $2, $3, t[2] "-" t[3], $5}' | sort -k1,1 -k2,2n -k3,3n -k4,4
grep -E "fa2_bhsd|cudnn|flash" $OUT/grid.txt
echo "done ${SECONDS}s"

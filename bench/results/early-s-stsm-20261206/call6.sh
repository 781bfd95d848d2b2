#!/usr/bin/env bash
# 2026-12-06 session 10:21 call 6: the Hopper d128 forward puts O into its out tiles (the last
# V stage) by stmatrix (kOutByMatrix: 16 STSM a thread a tile instead of 64 STS). H128 = HEAD
# b069113, O128 = the change; d128 only, sm_90a.
set -u
R=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/o.txz -C .dev/bw
export PYTHONPATH=python:bench
D=.dev/bw
echo "== correctness t=${SECONDS}s"
LD_LIBRARY_PATH=$D/O128 timeout 45 $D/O128/fa2_cuda_check small /d128 > $R/small-O128.txt 2>&1; echo "small O128 rc $?: ok $(grep -c '^ok' $R/small-O128.txt), FAIL $(grep -c '^FAIL' $R/small-O128.txt)"
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 100 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192,16384" "128" $D/H128 $D/O128 2>&1 | tee $R/ab.txt
FA2_BENCH_FWD=1 timeout 100 backends/cuda/tools/compare_builds.sh "1024,2048,4096" "128" $D/O128 $D/H128 2>&1 | tee $R/ab2.txt
echo "== sustained t=${SECONDS}s"
for lib in O128 H128; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 45 python3 bench/power_probe.py --modes fwd --shapes 128:2048:0,128:2048:1,128:4096:0 --impls fa2,cudnn --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^fwd"
done
echo "== sanitizers O128 t=${SECONDS}s"
for tool in memcheck racecheck; do
  for c in 'bf16/many-tiles-causal-sq>sk/d128' 'bf16/varlen-causal-many-tiles/d128'; do
    n=$tool-$(echo $c | tr -c 'a-z0-9\n' '_')
    LD_LIBRARY_PATH=$D/O128 timeout 50 compute-sanitizer --tool $tool --error-exitcode 9 $D/O128/fa2_cuda_check small "$c" > $R/$n.txt 2>&1; echo "$tool $c rc $?: $(tail -n 1 $R/$n.txt)"
  done
done
echo "done ${SECONDS}s"

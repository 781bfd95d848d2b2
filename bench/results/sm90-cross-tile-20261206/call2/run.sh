#!/usr/bin/env bash
# 2026-12-06 session 08:31 call 2: the Hopper forward passing from tile to tile inside its
# pipeline (kCrossTile: the next tile's first S issued with this tile's last P V, its softmax
# under that P V, then this tile's epilogue). B = HEAD 8c5a6e1; N = the restructured consumer
# with kCrossTile off; X = kCrossTile on (fixed lengths; not the d128 192-key plan).
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/bw.txz -C .dev/bw
export PYTHONPATH=python:bench
D=.dev/bw
echo "== correctness X t=${SECONDS}s"
for d in 64 128 256; do
  LD_LIBRARY_PATH=$D/X timeout 60 $D/X/fa2_cuda_check small /d$d > $R/small-X-$d.txt 2>&1; echo "small X d$d rc $?: $(tail -n 1 $R/small-X-$d.txt)"
done
LD_LIBRARY_PATH=$D/X timeout 120 $D/X/fa2_conformance --gtest_filter='*cuda*d64*:*cuda*d128*:*cuda*d256*' > $R/conf-X.txt 2>&1; echo "conf rc $?: $(tail -n 3 $R/conf-X.txt | tr '\n' ' ')"
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 200 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192" "64,128" $D/B $D/N $D/X 2>&1 | tee $R/ab1.txt
FA2_BENCH_FWD=1 timeout 120 backends/cuda/tools/compare_builds.sh "2048,8192" "256" $D/X $D/B 2>&1 | tee $R/ab256.txt
echo "== sustained t=${SECONDS}s"
for lib in X B; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 70 python3 bench/power_probe.py --modes fwd --shapes 64:2048:0,64:2048:1,128:2048:0,128:4096:0 --impls fa2,cudnn --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^fwd"
done
echo "== racecheck X t=${SECONDS}s"
LD_LIBRARY_PATH=$D/X timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $D/X/fa2_cuda_check small many-tiles-causal > $R/racecheck.txt 2>&1; echo racecheck rc $?; tail -n 2 $R/racecheck.txt
echo "done ${SECONDS}s"

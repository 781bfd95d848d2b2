#!/usr/bin/env bash
# 2026-12-06 session 08:31 call 3: the cross-tile Hopper forward, second form (each step
# written once, __syncwarp + warp_uniform before the main loop). B = HEAD 8c5a6e1;
# N2 = restructured, kCrossTile off (d64 build); X2 = kCrossTile at d64 only (d64/128/256).
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/bw.txz -C .dev/bw
export PYTHONPATH=python:bench
D=.dev/bw
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 200 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192,16384" "64" $D/B $D/N2 $D/X2 2>&1 | tee $R/ab64.txt
FA2_BENCH_FWD=1 timeout 120 backends/cuda/tools/compare_builds.sh "2048,8192" "128,256" $D/X2 $D/B 2>&1 | tee $R/ab128-256.txt
echo "== sustained t=${SECONDS}s"
for lib in X2 B; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 70 python3 bench/power_probe.py --modes fwd --shapes 64:2048:0,64:2048:1,64:4096:0 --impls fa2,cudnn --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^fwd"
done
echo "== correctness X2 t=${SECONDS}s"
for d in 64 128 256; do
  LD_LIBRARY_PATH=$D/X2 timeout 60 $D/X2/fa2_cuda_check small /d$d > $R/small-X2-$d.txt 2>&1; echo "small X2 d$d rc $?: $(tail -n 1 $R/small-X2-$d.txt)"
done
LD_LIBRARY_PATH=$D/X2 timeout 120 $D/X2/fa2_conformance --gtest_filter='*cuda*d64*:*cuda*d128*:*cuda*d256*' > $R/conf-X2.txt 2>&1; echo "conf rc $?: $(tail -n 3 $R/conf-X2.txt | tr '\n' ' ')"
for tool in memcheck racecheck; do
  LD_LIBRARY_PATH=$D/X2 timeout 120 compute-sanitizer --tool $tool $D/X2/fa2_cuda_check small many-tiles-causal > $R/$tool.txt 2>&1; echo "$tool rc $?"; grep -E "cases failed|SUMMARY" $R/$tool.txt
done
echo "done ${SECONDS}s"

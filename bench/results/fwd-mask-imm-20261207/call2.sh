#!/usr/bin/env bash
# 2026-12-07 09:00– session, after call1.sh (M1: causal d64 +1.2% sustained, non-causal d64 -0.9%:
# the main loop came out of ptxas in another order). M3.patch: the immediate-compare mask in the
# first block visited only, the loop's mask as HEAD's (its loop is closer to HEAD's, 0.91 of the
# opcode order at d64 against M1's 0.52). F1 / M1 / M3 side by side.
set -u
R=$OUT
D=.dev
for c in c5 c10 c11; do tar xJf $D/carry/$c.txz -C $D; done
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python:bench
for d in 64 128 256; do
  LD_LIBRARY_PATH=$D/M3 timeout 60 $D/M3/fa2_cuda_check small /d$d > $R/small-M3-d$d.txt 2>&1 &
done
wait
for d in 64 128 256; do echo "small /d$d: $(grep -E 'cases failed' $R/small-M3-d$d.txt)"; done
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 150 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192" \
  "64,128" $D/F1 $D/M1 $D/M3 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in M3 F1 M1 M3 F1 M1; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 60 python3 bench/power_probe.py --modes fwd \
    --shapes 64:2048:1,64:2048:0,64:1024:0 --impls fa2,cudnn --seconds 2.5 2>&1 | grep -E "^fwd"
done 2>&1 | tee $R/sustained.txt
echo "done ${SECONDS}s"

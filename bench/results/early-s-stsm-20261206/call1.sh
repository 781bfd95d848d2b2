#!/usr/bin/env bash
# 2026-12-06 session 10:21 call 1: the Hopper d64 forward issues the next tile's first
# S = Q K^T right after this tile's last P V (kEarlyFirstS), so that it runs under the
# epilogue. B = HEAD 71952f0; E1 = the change with warp_uniform loop values and a
# __syncwarp at the top of the tile loop; E2 = without them. Builds: d64 only, sm_90a.
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/bw.txz -C .dev/bw
export PYTHONPATH=python:bench
D=.dev/bw
echo "== correctness t=${SECONDS}s"
for v in E1 E2; do
  LD_LIBRARY_PATH=$D/$v timeout 70 $D/$v/fa2_cuda_check small /d64 > $R/small-$v.txt 2>&1; echo "small $v rc $?: $(tail -n 1 $R/small-$v.txt)"
done
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 200 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192,16384" "64" $D/B $D/E1 $D/E2 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in B E1 E2; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 60 python3 bench/power_probe.py --modes fwd --shapes 64:2048:0,64:2048:1,64:4096:0 --impls fa2,cudnn --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^fwd"
done
echo "done ${SECONDS}s"

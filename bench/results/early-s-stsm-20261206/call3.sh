#!/usr/bin/env bash
# 2026-12-06 session 10:21 call 3: the sm80 backward stores P and dS with stmatrix on sm_90
# (16 STSM a warp an iteration at d64 instead of 64 STS). B3 = HEAD 71952f0, S3 = the change;
# both d64 / d128 / d256, sm_90a; timed on the sm80 path (FA2_CUDA_PATH=sm80).
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/b3.txz -C .dev/bw
export PYTHONPATH=python:bench FA2_CUDA_PATH=sm80
D=.dev/bw
echo "== correctness S3 (sm80 path) t=${SECONDS}s"
for d in 64 128 256; do
  LD_LIBRARY_PATH=$D/S3 timeout 60 $D/S3/fa2_cuda_check small /d$d > $R/small-S3-$d.txt 2>&1; echo "small S3 d$d rc $?: $(tail -n 1 $R/small-S3-$d.txt)"
done
echo "== events t=${SECONDS}s"
timeout 240 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192,16384" "64,128,256" $D/B3 $D/S3 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
for lib in S3 B3; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 80 python3 bench/power_probe.py --modes bwd --shapes 64:8192:0,64:16384:0,128:8192:0 --impls fa2_sm80,flash --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^bwd"
done
echo "== sanitizers S3 (sm80 path) t=${SECONDS}s"
for tool in memcheck racecheck; do
  for c in causal127x113-gqa/d64 plain113x127/d128 causal127x113-gqa/d256; do
    LD_LIBRARY_PATH=$D/S3 timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $D/S3/fa2_cuda_check small $c > $R/$tool-${c%%/*}-${c##*/}.txt 2>&1; echo "$tool $c rc $?: $(tail -n 1 $R/$tool-${c%%/*}-${c##*/}.txt)"
  done
done
echo "done ${SECONDS}s"

#!/usr/bin/env bash
# 2026-12-06 session 05:38 call 4: the sm80 d256 causal forward at 512 / 1k with a head's tiles
# together (T: sm80_fwd_rows_first_above(256) = 8) against longest rows first (B = HEAD f21f315).
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python:bench
B=.dev/s9/B; T=.dev/s9/T
echo "== correctness t=${SECONDS}s"
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$T timeout 60 $T/fa2_cuda_check small > $R/small-T.txt 2>&1; echo small rc $?; tail -n 2 $R/small-T.txt
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$T timeout 90 $T/fa2_conformance --gtest_filter='*cuda*d256*' > $R/conf-T.txt 2>&1; echo conf rc $?; tail -n 1 $R/conf-T.txt
echo "== events t=${SECONDS}s"
FA2_CUDA_PATH=sm80 FA2_BENCH_FWD=1 timeout 120 backends/cuda/tools/compare_builds.sh "512,1024,2048" "256" $B $T > $R/ab1.txt 2>&1; cat $R/ab1.txt
FA2_CUDA_PATH=sm80 FA2_BENCH_FWD=1 timeout 120 backends/cuda/tools/compare_builds.sh "512,1024,2048" "256" $T $B > $R/ab2.txt 2>&1; cat $R/ab2.txt
echo "== sustained t=${SECONDS}s"
for lib in B T B T; do
  [[ $SECONDS -gt 430 ]] && break
  echo "-- $lib"; FA2_LIBRARY=.dev/s9/$lib/libfa2.so timeout 60 python3 bench/power_probe.py --shapes 256:512:1,256:1024:1 --impls fa2_sm80,flash --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -vE "^\s*$" | tail -n 6
done
echo "== side by side t=${SECONDS}s"
for lib in T B; do
  [[ $SECONDS -gt 500 ]] && break
  FA2_LIBRARY=.dev/s9/$lib/libfa2.so timeout 60 python3 bench/sdpa_side_by_side.py --dtypes bf16 --head-dims 256 --causal 1 --seqlens 512,1024 --modes fwd --impls fa2_sm80,flash --rounds 3 --out $R/sxs-$lib > $R/sxs-$lib.txt 2>&1; echo "-- $lib"; grep -E "fa2_sm80|flash" $R/sxs-$lib.txt | tail -n 8
done
echo "done ${SECONDS}s"

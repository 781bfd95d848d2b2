#!/usr/bin/env bash
# call 1: d64 Hopper forward, O by TMA store with the main loop kept (K5F = c60715f + k5.patch) and
# without (K3 = + k3.patch) against HEAD (F1: c60715f's kernels); then HEAD's standing (side by side).
set -u
R=$OUT
L=$R/log.txt
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader | tee $L
for T in K5F; do
  LD_LIBRARY_PATH=.dev/$T timeout 60 .dev/$T/fa2_cuda_check small /d64 > $R/small.txt 2>&1
  echo "small $T: $(tail -1 $R/small.txt)" | tee -a $L
done
for round in 1 2 3; do for dir in F1 K5F K3; do
  echo "== $dir" >> $R/ab.txt
  LD_LIBRARY_PATH=.dev/$dir timeout 60 .dev/$dir/fa2_cuda_check bench 1024,2048,4096,8192 64 >> $R/ab.txt 2>&1
done; done
echo "ab done ${SECONDS}s" | tee -a $L
export PYTHONPATH=python:bench
for round in 1 2; do for lib in F1 K5F; do
  echo "== $lib" >> $L
  FA2_LIBRARY=.dev/$lib/libfa2.so timeout 80 python3 bench/power_probe.py --modes fwd --seconds 2.5 \
    --impls fa2,cudnn --shapes 64:2048:0,64:2048:1,64:4096:0 2>&1 | grep -v Warn >> $L
done; done
echo "probe done ${SECONDS}s" | tee -a $L
T=.dev/K5F
LD_LIBRARY_PATH=$T timeout 110 compute-sanitizer --tool memcheck --error-exitcode 9 $T/fa2_cuda_check small /d64 > $R/small.txt 2>&1; echo "memcheck K5F rc=$? $(tail -1 $R/small.txt)" | tee -a $L
LD_LIBRARY_PATH=$T timeout 110 compute-sanitizer --tool racecheck --error-exitcode 9 $T/fa2_cuda_check small /d64 > $R/small.txt 2>&1; echo "racecheck K5F rc=$? $(tail -1 $R/small.txt)" | tee -a $L
echo "sanitizers done ${SECONDS}s" | tee -a $L
LD_LIBRARY_PATH=.dev/K5F timeout 170 .dev/K5F/fa2_conformance --gtest_filter="*cuda*" > $R/conf.txt 2>&1; echo "conformance K5F rc=$? $(grep -E "PASSED|FAILED" $R/conf.txt | tail -2 | tr "\n" " ")" | tee -a $L
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  mkdir -p $R/bf16
  FA2_LIBRARY=.dev/F1/libfa2.so PYTHONPATH=python timeout 150 python3 bench/sdpa_side_by_side.py --dtypes bf16 \
    --head-dims 64,128,256 --modes fwd,bwd --impls fa2,fa2_sm80,flash,cudnn,efficient \
    --warmup 10 --rep 40 --rounds 2 --out $R/bf16 --plot > $R/bf16/sxs-bf16.txt 2>&1
  echo "sxs done ${SECONDS}s" | tee -a $L
fi
cat $L

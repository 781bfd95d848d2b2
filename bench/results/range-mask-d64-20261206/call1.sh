#!/usr/bin/env bash
# call 1: the Hopper d64 forward's masked block by one compare a row (R64 = 2b5a2ec +
# range-mask-d64.patch) and with it the half first block (HR64 = + half-first-block-d64.patch)
# against HEAD (B64), all three built at d64 only: correctness, CUDA events, sustained probes.
set -u
R=$OUT
L=$R/log.txt
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader | tee $L
for T in R64 HR64; do
  LD_LIBRARY_PATH=.dev/$T timeout 60 .dev/$T/fa2_cuda_check small /d64 > $R/small-$T.txt 2>&1
  echo "small $T: rc=$? $(tail -1 $R/small-$T.txt)" | tee -a $L
done
for round in 1 2 3; do for dir in B64 R64 HR64; do
  echo "== $dir" >> $R/ab.txt
  LD_LIBRARY_PATH=.dev/$dir timeout 60 .dev/$dir/fa2_cuda_check bench 1024,2048,4096,8192 64 fwd >> $R/ab.txt 2>&1
done; done
echo "ab done ${SECONDS}s" | tee -a $L
export PYTHONPATH=python:bench
for round in 1 2; do for lib in B64 R64 HR64; do
  echo "== $lib" >> $L
  FA2_LIBRARY=.dev/$lib/libfa2.so timeout 80 python3 bench/power_probe.py --modes fwd --seconds 2.5 \
    --impls fa2,cudnn --shapes 64:2048:1,64:4096:1,64:2048:0 2>&1 | grep -v Warn >> $L
done; done
echo "probe done ${SECONDS}s" | tee -a $L
cat $L

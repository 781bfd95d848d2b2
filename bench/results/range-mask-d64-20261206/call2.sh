#!/usr/bin/env bash
# call 2: the first (masked) block's mask by one compare a row at every head dim, the main loops
# unchanged (FR = 2b5a2ec + first-block-range-mask.patch) against HEAD (F1: c60715f's kernels,
# byte-identical to 2b5a2ec's), CUDA events and sustained probes; memcheck of FR.
set -u
R=$OUT
L=$R/log.txt
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader | tee $L
for d in 64; do
  LD_LIBRARY_PATH=.dev/FR timeout 60 .dev/FR/fa2_cuda_check small /d$d > $R/small-d$d.txt 2>&1
  echo "small FR /d$d: rc=$? $(tail -1 $R/small-d$d.txt)" | tee -a $L
done
for round in 1 2; do for dir in F1 FR; do
  echo "== $dir" >> $R/ab.txt
  LD_LIBRARY_PATH=.dev/$dir timeout 60 .dev/$dir/fa2_cuda_check bench 1024,2048,4096 64 fwd >> $R/ab.txt 2>&1
done; done
echo "ab done ${SECONDS}s" | tee -a $L
export PYTHONPATH=python:bench
for round in 1 2; do for lib in F1 FR; do
  echo "== $lib" >> $L
  FA2_LIBRARY=.dev/$lib/libfa2.so timeout 80 python3 bench/power_probe.py --modes fwd --seconds 2.5 \
    --impls fa2,cudnn --shapes 64:2048:1,64:1024:1 2>&1 | grep -v Warn >> $L
done; done
echo "probe done ${SECONDS}s" | tee -a $L
T=.dev/FR
LD_LIBRARY_PATH=$T timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $T/fa2_cuda_check small /d64 > $R/memcheck.txt 2>&1; echo "memcheck FR rc=$? $(tail -1 $R/memcheck.txt)" | tee -a $L
cat $L

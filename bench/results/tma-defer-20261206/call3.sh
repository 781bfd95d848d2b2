#!/usr/bin/env bash
# call 4: the committed form (F1 = HEAD 5375982 + final.patch, all head dims): Hopper-path checks,
# A/B against H7 at d128, sustained d128 2k / causal 2k / 4k, then F1's bf16 side by side.
set -u
R=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader | tee $R/gpu.txt
F=.dev/F1
export LD_LIBRARY_PATH=$F
for d in 40 64 128 192 256; do
  (timeout 100 $F/fa2_cuda_check small /d$d > $R/small-d$d.txt 2>&1; echo "small d$d rc=$? $(tail -n 1 $R/small-d$d.txt)" > $R/small-d$d.sum) &
done
for tool in memcheck racecheck; do for d in 128; do
  (timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $F/fa2_cuda_check small /d$d > $R/$tool-d$d.txt 2>&1; echo "$tool d$d rc=$? $(tail -n 1 $R/$tool-d$d.txt)" > $R/$tool-d$d.sum) &
done; done
(timeout 200 $F/fa2_conformance --gtest_filter='*cuda*' > $R/conf.txt 2>&1; echo "conf rc=$? $(grep -E 'PASSED|FAILED' $R/conf.txt | tail -n 2 | tr '\n' ' ')" > $R/conf.sum) &
wait
cat $R/*.sum
echo "checks done ${SECONDS}s"
unset LD_LIBRARY_PATH
for round in 1 2; do for dir in .dev/H7 .dev/F1; do
  echo "== $dir" >> $R/ab-raw.txt
  LD_LIBRARY_PATH=$dir timeout 60 $dir/fa2_cuda_check bench 1024,2048,4096 128 >> $R/ab-raw.txt 2>&1
done; done
echo "ab done ${SECONDS}s"
export PYTHONPATH=python:bench
for lib in H7 F1; do
  echo "== $lib" >> $R/probe.txt
  FA2_LIBRARY=.dev/$lib/libfa2.so timeout 80 python3 bench/power_probe.py --modes fwd --seconds 2.5 --impls fa2,cudnn \
    --shapes 128:2048:0,128:2048:1,128:4096:0 2>&1 | grep -v Warn >> $R/probe.txt
done
echo "probe done ${SECONDS}s"
cat $R/probe.txt

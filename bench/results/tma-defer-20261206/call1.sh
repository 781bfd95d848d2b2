#!/usr/bin/env bash
# call 2: Hopper d128 forward, O by TMA store with the V stage returned at the next tile's start
# (T1 = HEAD 5375982 + tma-defer.patch, d64 / d128) against HEAD (H7): CUDA events, checks, sustained.
set -u
R=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader | tee $R/gpu.txt
T=.dev/T1
LD_LIBRARY_PATH=$T timeout 60 $T/fa2_cuda_check small /d128 > $R/small-d128.txt 2>&1; tail -1 $R/small-d128.txt
LD_LIBRARY_PATH=$T timeout 60 $T/fa2_cuda_check small /d64 > $R/small-d64.txt 2>&1; tail -1 $R/small-d64.txt
(LD_LIBRARY_PATH=$T timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $T/fa2_cuda_check small /d128 > $R/memcheck-d128.txt 2>&1; echo "memcheck rc=$?" >> $R/memcheck-d128.txt) &
(LD_LIBRARY_PATH=$T timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 $T/fa2_cuda_check small /d128 > $R/racecheck-d128.txt 2>&1; echo "racecheck rc=$?" >> $R/racecheck-d128.txt) &
(LD_LIBRARY_PATH=$T timeout 200 $T/fa2_conformance --gtest_filter='*cuda*' > $R/conf.txt 2>&1; echo "conf rc=$?" >> $R/conf.txt) &
wait
tail -2 $R/memcheck-d128.txt $R/racecheck-d128.txt; grep -E "PASSED|FAILED" $R/conf.txt | tail -3
echo "checks done ${SECONDS}s"
for round in 1 2 3; do for dir in .dev/H7 .dev/T1; do
  echo "== $dir" >> $R/ab-raw.txt
  LD_LIBRARY_PATH=$dir timeout 60 $dir/fa2_cuda_check bench 1024,2048,4096 128 >> $R/ab-raw.txt 2>&1
done; done
LD_LIBRARY_PATH=.dev/T2 timeout 60 .dev/T2/fa2_cuda_check small /d64 > $R/small-T2-d64.txt 2>&1; tail -1 $R/small-T2-d64.txt
for round in 1 2; do for dir in .dev/H7 .dev/T2; do
  echo "== $dir" >> $R/ab-d64-raw.txt
  LD_LIBRARY_PATH=$dir timeout 60 $dir/fa2_cuda_check bench 1024,2048,4096 64 >> $R/ab-d64-raw.txt 2>&1
done; done
echo "ab done ${SECONDS}s"
export PYTHONPATH=python:bench
for round in 1 2; do for lib in H7 T1; do
  echo "== $lib" >> $R/probe.txt
  FA2_LIBRARY=.dev/$lib/libfa2.so timeout 80 python3 bench/power_probe.py --modes fwd --seconds 2.5 --impls fa2,cudnn \
    --shapes 128:2048:0,128:2048:1,128:4096:0 2>&1 | grep -v Warn >> $R/probe.txt
done; done
echo "done ${SECONDS}s"
cat $R/probe.txt

#!/usr/bin/env bash
# call 2: H6 (HEAD b4c681f) against F7 (+ epi-final.patch: sm80 O / dK / dV by stmatrix from d128), CUDA events then sustained.
set -u
R=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader | tee $R/gpu.txt
for round in 1 2 3; do for dir in .dev/H6 .dev/F7; do
  echo "== $dir" >> $R/ab2-raw.txt
  FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$dir timeout 60 $dir/fa2_cuda_check bench 512,1024,2048,8192,16384 32,64,96,128,192,256 >> $R/ab2-raw.txt 2>&1
done; done
echo "ab2 done ${SECONDS}s"
export PYTHONPATH=python:bench
for round in 1 2; do for lib in H6 F7; do
  echo "== $lib" >> $R/probe.txt
  FA2_LIBRARY=.dev/$lib/libfa2.so timeout 60 python3 bench/power_probe.py --modes bwd --seconds 2.5 --impls fa2_sm80,flash \
    --shapes 128:8192:0,128:2048:0 2>&1 | grep -v Warn >> $R/probe.txt
  FA2_LIBRARY=.dev/$lib/libfa2.so timeout 60 python3 bench/power_probe.py --modes fwd --seconds 2.5 --impls fa2_sm80,flash \
    --shapes 256:512:1,128:1024:0 2>&1 | grep -v Warn >> $R/probe.txt
done; done
echo "done ${SECONDS}s"
cat $R/probe.txt

#!/usr/bin/env bash
# HEAD3 = HEAD 85e6f4d (head dims 64;128;256): the committed form on the GPU, then the side by side.
set -u
B=.dev/HEAD3
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
mkdir -p /tmp/v
export LD_LIBRARY_PATH=$B
$B/fa2_conformance --gtest_filter='*cuda*' > /tmp/v/conf-default 2>&1 &
FA2_CUDA_PATH=sm80 $B/fa2_conformance --gtest_filter='*cuda*' > /tmp/v/conf-sm80 2>&1 &
for d in 40 64 128 256; do $B/fa2_cuda_check small /d$d > /tmp/v/small$d 2>&1 & done
wait
for f in conf-default conf-sm80; do echo "== $f: $(grep -E '^\[  PASSED|^\[  FAILED' /tmp/v/$f | tr '\n' ' ')"; done
for d in 40 64 128 256; do echo "== small /d$d: $(grep -E 'cases failed' /tmp/v/small$d)"; done
echo "checks done ${SECONDS}s"
unset LD_LIBRARY_PATH
FA2_LIBRARY=$B/libfa2.so PYTHONPATH=python python3 bench/sdpa_side_by_side.py --dtypes bf16 \
  --head-dims 64,128,256 --modes fwd,bwd --impls fa2,fa2_sm80,flash,cudnn,efficient \
  --warmup 10 --rep 40 --rounds 2 --out $OUT --plot > $OUT/sxs-bf16.txt 2>&1
tail -45 $OUT/sxs-bf16.txt
echo "done ${SECONDS}s"

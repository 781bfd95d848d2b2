#!/usr/bin/env bash
# HEAD3 = HEAD 85e6f4d (head dims 64;128;256): the fp16 side by side.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
FA2_LIBRARY=.dev/HEAD3/libfa2.so PYTHONPATH=python python3 bench/sdpa_side_by_side.py --dtypes fp16 \
  --head-dims 64,128,256 --modes fwd,bwd --impls fa2,fa2_sm80,flash,cudnn,efficient \
  --warmup 10 --rep 40 --rounds 2 --out $OUT --plot > $OUT/sxs-fp16.txt 2>&1
tail -4 $OUT/sxs-fp16.txt
echo "done ${SECONDS}s"

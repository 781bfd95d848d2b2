#!/usr/bin/env bash
# HEAD3 = HEAD 85e6f4d: the bf16 side by side on the H200, then sustained probes at the miss points.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
mkdir -p $OUT/bf16
FA2_LIBRARY=.dev/HEAD3/libfa2.so PYTHONPATH=python python3 bench/sdpa_side_by_side.py --dtypes bf16 \
  --head-dims 64,128,256 --modes fwd,bwd --impls fa2,fa2_sm80,flash,cudnn,efficient \
  --warmup 10 --rep 40 --rounds 2 --out $OUT/bf16 --plot > $OUT/bf16/sxs-bf16.txt 2>&1
echo "sxs done ${SECONDS}s"
export FA2_LIBRARY=.dev/HEAD3/libfa2.so PYTHONPATH=python:bench
python3 bench/power_probe.py --modes fwd --seconds 2.5 --impls fa2,cudnn \
  --shapes 64:2048:0,64:2048:1,128:1024:0,128:2048:0,128:2048:1,128:4096:0 2>&1 | grep -v Warn
python3 bench/power_probe.py --modes bwd --seconds 2.5 --impls fa2_sm80,flash \
  --shapes 64:8192:0,64:16384:0 2>&1 | grep -v Warn
python3 bench/power_probe.py --modes fwd --seconds 2.5 --impls fa2_sm80,flash \
  --shapes 256:512:1 2>&1 | grep -v Warn
echo "done ${SECONDS}s"

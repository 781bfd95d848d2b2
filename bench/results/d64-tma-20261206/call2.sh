#!/usr/bin/env bash
# call 2: HEAD's standing (the H200 if lent) (F1: c60715f's kernels): bf16 side by side, sustained probes.
set -u
R=$OUT
L=$R/log.txt
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader | tee $L

mkdir -p $R/bf16
FA2_LIBRARY=.dev/F1/libfa2.so PYTHONPATH=python timeout 150 python3 bench/sdpa_side_by_side.py --dtypes bf16 \
  --head-dims 64,128,256 --modes fwd,bwd --impls fa2,fa2_sm80,flash,cudnn,efficient \
  --warmup 10 --rep 40 --rounds 2 --out $R/bf16 --plot > $R/bf16/sxs-bf16.txt 2>&1
echo "sxs done ${SECONDS}s" | tee -a $L
export FA2_LIBRARY=.dev/F1/libfa2.so PYTHONPATH=python:bench
probe() { timeout 80 python3 bench/power_probe.py --seconds 2.5 "$@" 2>&1 | grep -v Warn; }
{
probe --modes fwd --impls fa2,cudnn --shapes 64:2048:0,64:2048:1,128:1024:0,128:2048:0,128:4096:0
probe --modes bwd --impls fa2_sm80,flash --shapes 64:8192:0,64:16384:0
} >> $L
echo "done ${SECONDS}s" | tee -a $L
cat $L

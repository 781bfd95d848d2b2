#!/usr/bin/env bash
# 2026-12-06 session 10:21 call 2: kernel-by-kernel time of one sm80-path backward at d64
# (FA2_CUDA_PATH=sm80) against SDPA flash, and of the Hopper path against cuDNN
# (bench/kernel_breakdown.py, torch.profiler). B = HEAD 71952f0 (d64 only).
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/bw.txz -C .dev/bw
export PYTHONPATH=python:bench
D=.dev/bw
echo "== sm80 path vs flash t=${SECONDS}s"
FA2_CUDA_PATH=sm80 FA2_LIBRARY=$D/B/libfa2.so timeout 150 python3 bench/kernel_breakdown.py --shapes 64:1024:0,64:2048:0,64:8192:0,64:16384:0,64:8192:1 --peers flash 2>&1 | tee $R/sm80-flash.txt
echo "== Hopper path vs cudnn t=${SECONDS}s"
FA2_LIBRARY=$D/B/libfa2.so timeout 100 python3 bench/kernel_breakdown.py --shapes 64:2048:0,64:8192:0 --peers cudnn 2>&1 | tee $R/sm90-cudnn.txt
echo "done ${SECONDS}s"

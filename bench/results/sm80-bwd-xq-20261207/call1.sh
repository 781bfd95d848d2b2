#!/usr/bin/env bash
# (Not run: the pairs, sm80-bwd-pairs-20261207, took the machine that came; see NOTES.md.)
# 2026-12-07 15:54– session: the sm80 d64 backward with XOR-swizzled Q / dO tiles (XQ.patch,
# EXPERIMENT) against HEAD's kernels (F2), under sustained load. The swizzle measured level by CUDA
# events on 2026-12-02 (H200, before the sustained probe existed); under ncu our padded Q / dO
# copies take 83.5 M excess shared wavefronts at 8k (2026-12-07 03:40), energy the 700 W cap may
# hand back as clock. Its main loop is 58 instructions longer (walk XORs) and moved (0.66).
# On the H200 (last side by side 2026-12-05) HEAD's standing first (standing-20261207d/call.sh).
set -u
R=$OUT
if [[ $(nvidia-smi --query-gpu=name --format=csv,noheader) == *H200* ]]; then
  OUT=$R/standing bash bench/results/standing-20261207d/call.sh > /tmp/standing.txt 2>&1
  head -n 30 /tmp/standing.txt
fi
tar xJf .dev/carry/c15.txz -C .dev && tar xJf .dev/carry/c16.txz -C .dev
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/log.txt
export FA2_CUDA_PATH=sm80 PYTHONPATH=python:bench
D=.dev
LD_LIBRARY_PATH=$D/XQ timeout 40 $D/XQ/fa2_cuda_check small /d64 > /tmp/small-XQ.txt 2>&1
echo "small XQ d64 rc $?: $(grep -E 'cases failed' /tmp/small-XQ.txt)" | tee -a $R/log.txt
echo "== events t=${SECONDS}s" | tee -a $R/log.txt
timeout 60 backends/cuda/tools/compare_builds.sh "2048,8192,16384" "64" $D/F2 $D/XQ \
  2>&1 | tee -a $R/log.txt
echo "== sustained t=${SECONDS}s" | tee -a $R/log.txt
for lib in XQ F2 XQ F2; do
  echo "-- $lib"
  FA2_LIBRARY=$D/$lib/libfa2.so timeout 30 python3 bench/power_probe.py --modes bwd \
    --shapes 64:8192:0,64:16384:0 --impls fa2_sm80,flash --seconds 2.5 2>&1 | grep -E "^bwd"
done | tee -a $R/log.txt
echo "done ${SECONDS}s" | tee -a $R/log.txt

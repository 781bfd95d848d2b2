#!/usr/bin/env bash
# 2026-12-07 session, last call: on the H200, HEAD's standing (standing-20261207b/call.sh); on an
# H100, what the Hopper d64 forward does per unit of work against cuDNN, with and without the
# causal mask at 2k (the masked one is 3.5% behind in GFLOP/J under the cap, the unmasked level):
# ncu --set full of both main kernels at each shape (instructions, shared wavefronts, L2 / DRAM).
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if [[ $gpu == *H200* ]]; then
  bash bench/results/standing-20261207b/call.sh
  exit
fi
R=$OUT
tar xJf .dev/carry/c5.txz -C .dev
for causal in 1 0; do
  OUT=$R/c$causal timeout 200 backends/cuda/tools/profile_vs_peers.sh .dev/F1 64 2048 $causal fwd \
    fa2,cudnn > $R/ncu-c$causal.txt 2>&1
  echo "== causal $causal t=${SECONDS}s"
  head -n 40 $R/ncu-c$causal.txt
done

#!/usr/bin/env bash
# 2026-12-07 session: call1.sh (V1 against F1; ncu only on an H100), then on the H200 HEAD's
# standing (bench/results/d64-tma-20261206/call2.sh: bf16 side by side with every SDPA peer,
# sustained probes at the misses).
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
[[ $gpu == *H200* ]] && export SKIP_NCU=1
bash bench/results/l2hint-20261207/call1.sh
[[ $gpu == *H200* ]] && bash bench/results/d64-tma-20261206/call2.sh

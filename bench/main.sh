#!/usr/bin/env bash
# The main job: build the best backend this machine has, then benchmark the
# FlashAttention-2 paper's grid on it, each result checked against float64.
#   bash bench/main.sh [fa2_bench flags...]     e.g. --quick, --json out.json
# CUDA when an NVIDIA GPU answers nvidia-smi and nvcc exists (the Hopper
# kernels too when that GPU is compute capability 9.0), else the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
preset=cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && command -v nvcc >/dev/null; then
  preset=cuda-sm80
  if nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | grep -qx '9.0'; then
    preset=cuda-sm90
  fi
fi
echo "fa2: building preset '$preset'"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target fa2_bench
exec "build/$preset/bench/fa2_bench" "$@"

#!/usr/bin/env bash
# Times the same grid with several builds of the library, alternating them
# twice (A B .. A B ..) in one process tree so that clock and power state
# reach every build alike, and prints TFLOP/s side by side (CUDA events,
# fa2_cuda_check bench):
#   backends/cuda/tools/compare_builds.sh "512,2048,16384" "64,128" DIR_A DIR_B ...
# (FA2_BENCH_FWD=1: the forward alone.)
# Each DIR holds libfa2.so.0 (a -DFA2_CUDA_DEV_TOOLS=ON build's, or a copy)
# and, in DIR or DIR/backends/cuda/tools, fa2_cuda_check.
set -euo pipefail
seqlens=${1:?usage: compare_builds.sh SEQLENS HEAD_DIMS DIR...}
dims=${2:?usage: compare_builds.sh SEQLENS HEAD_DIMS DIR...}
shift 2
(($# >= 1)) || { echo "compare_builds.sh: no build folders" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for round in 1 2; do
  for dir in "$@"; do
    check=$dir/fa2_cuda_check
    [[ -x $check ]] || check=$dir/backends/cuda/tools/fa2_cuda_check
    echo "== $dir" >> "$out"
    LD_LIBRARY_PATH=$dir "$check" bench "$seqlens" "$dims" ${FA2_BENCH_FWD:+fwd} >> "$out"
  done
done
# Rows: dtype d seq causal fwd_ms fwd_tflops bwd_ms bwd_tflops.
awk '
  /^== / { dir = $2; if (!(dir in seen)) { seen[dir] = 1; dirs[++n] = dir } next }
  NF == 8 && ($1 == "bf16" || $1 == "f16") {
    key = $2 " " $3 " " $4
    if (!(key in known)) { known[key] = 1; keys[++m] = key }
    fwd[key, dir] = fwd[key, dir] " " $6; bwd[key, dir] = bwd[key, dir] " " $8
  }
  END {
    printf "%-16s", "d seq causal"
    for (i = 1; i <= n; i++) printf " | fwd,bwd x2 %s", dirs[i]
    printf "\n"
    for (k = 1; k <= m; k++) {
      printf "%-16s", keys[k]
      for (i = 1; i <= n; i++) printf " |%s /%s", fwd[keys[k], dirs[i]], bwd[keys[k], dirs[i]]
      printf "\n"
    }
  }' "$out"

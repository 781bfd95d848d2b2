#!/usr/bin/env bash
# Everything a CUDA change must pass on the GPU, in one go (one device call):
#   backends/cuda/tools/verify_on_gpu.sh BUILD_DIR [quick]
# BUILD_DIR: a build with -DFA2_CUDA_DEV_TOOLS=ON (e.g. the cuda-sm90 preset plus
# that option), built on any machine (static cudart). On a Hopper GPU both paths
# are checked: the Hopper kernels (default) and the sm80 ones (FA2_CUDA_PATH=sm80).
# Logs go to $OUT (default ./verify-logs); the summary to stdout. `quick` skips the
# 222-case float64 run and the side by side with PyTorch's SDPA backends.
# FA2_VERIFY_PATHS="default" (or "sm80") checks one path. The `small` cases and the
# sanitizers over them run as one process per head dim, all at once: their time is the
# CPU's float64 reference, and one process for all of `small` under racecheck took
# longer than a 10-minute call (on the H200, 2026-12-03: a path's checks in ~3 minutes).
set -uo pipefail
build=$(cd "${1:?usage: verify_on_gpu.sh BUILD_DIR [quick]}" && pwd)
quick=${2:-}
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${OUT:-$PWD/verify-logs}
mkdir -p "$out"
rm -f "$out"/*.rc  # the failures are counted from these
check=$build/backends/cuda/tools/fa2_cuda_check
export LD_LIBRARY_PATH=$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# step NAME COMMAND...: runs it, keeps its log and status, reports the last line.
# Steps may run in the background: the failures are counted from the status files.
step() {
  local name=$1
  shift
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$rc" > "$out/$name.rc"
  local summary
  summary=$(grep -E 'PASSED|FAILED|cases failed|SUMMARY|check_sass:' "$out/$name.log" | tail -n 1)
  printf '%-28s rc=%-3d %s\n' "$name" "$rc" "${summary:-$(tail -n 1 "$out/$name.log")}"
}

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
paths=(default)
hopper=0
[[ $(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1) == 9.0 ]] && hopper=1 && paths+=(sm80)
[[ -n ${FA2_VERIFY_PATHS:-} ]] && read -r -a paths <<< "$FA2_VERIFY_PATHS"
# The Hopper kernels' SASS: HGMMA, not serialised (cuobjdump ships with the toolkit).
((hopper)) && [[ " ${paths[*]} " == *" default "* ]] &&
  step sass-hgmma "$root/backends/cuda/tools/check_sass.sh" "$build/libfa2.so"
for path in "${paths[@]}"; do
  env=()
  [[ $path == sm80 ]] && env=(env FA2_CUDA_PATH=sm80)
  step "conformance-$path" "${env[@]}" "$build/tests/fa2_conformance" --gtest_filter='*cuda*' &
  for d in 64 128 40 192 256; do  # the head dims of `small` (fa2_cuda_check.cpp)
    step "small-$path-d$d" "${env[@]}" "$check" small "/d$d" &
    step "memcheck-$path-d$d" "${env[@]}" compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$check" small "/d$d" &
    step "racecheck-$path-d$d" "${env[@]}" compute-sanitizer --tool racecheck --error-exitcode 9 \
      "$check" small "/d$d" &
  done
  # The sm80 backward's A100 plans (sm80/tile_plan.h, SmemBudget), which a
  # Hopper GPU would not pick by itself.
  if [[ $path == sm80 ]] && ((hopper)); then
    for d in 64 128 192; do
      step "small-$path-a100-d$d" "${env[@]}" FA2_CUDA_SMEM_LIMIT=166912 "$check" small "/d$d" &
      step "racecheck-$path-a100-d$d" "${env[@]}" FA2_CUDA_SMEM_LIMIT=166912 \
        compute-sanitizer --tool racecheck --error-exitcode 9 "$check" small "/d$d" &
    done
  fi
  wait
  [[ -z $quick ]] && step "full-$path" "${env[@]}" "$check" full
  step "bench-$path" "${env[@]}" "$check" bench 512,2048,16384 64,128,256
done
if [[ -z $quick ]]; then
  step sdpa-side-by-side env FA2_LIBRARY="$build/libfa2.so" PYTHONPATH="$root/python" \
    python3 "$root/bench/sdpa_side_by_side.py" --dtypes bf16 --modes fwd,bwd \
    --impls fa2,fa2_sm80,flash,cudnn --warmup 10 --rep 40 --out "$out"
fi
failed=$(cat "$out"/*.rc | grep -cv '^0$')
echo "$failed step(s) failed; logs in $out"
exit $((failed != 0))

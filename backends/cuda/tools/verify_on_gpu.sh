#!/usr/bin/env bash
# Everything a CUDA change must pass on the GPU, in one go (one device call):
#   backends/cuda/tools/verify_on_gpu.sh BUILD_DIR [quick]
# BUILD_DIR: a build with -DFA2_CUDA_DEV_TOOLS=ON (e.g. the cuda-sm90 preset plus
# that option), built on any machine (static cudart). On a Hopper GPU both paths
# are checked: the Hopper kernels (default) and the sm80 ones (FA2_CUDA_PATH=sm80).
# Logs go to $OUT (default ./verify-logs); the summary to stdout. `quick` skips the
# 222-case float64 run and the side by side with PyTorch's SDPA backends.
# FA2_VERIFY_PATHS="default" (or "sm80") checks one path: on the H200 racecheck of
# `small` alone takes minutes a path, so both paths no longer fit one 10-minute call.
set -uo pipefail
build=$(cd "${1:?usage: verify_on_gpu.sh BUILD_DIR [quick]}" && pwd)
quick=${2:-}
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${OUT:-$PWD/verify-logs}
mkdir -p "$out"
check=$build/backends/cuda/tools/fa2_cuda_check
export LD_LIBRARY_PATH=$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
failed=0

# step NAME COMMAND...: runs it, keeps its log, reports the last line and the status.
step() {
  local name=$1
  shift
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  ((rc != 0)) && failed=$((failed + 1))
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
  step "small-$path" "${env[@]}" "$check" small
  step "conformance-$path" "${env[@]}" "$build/tests/fa2_conformance" --gtest_filter='*cuda*'
  step "memcheck-$path" "${env[@]}" compute-sanitizer --tool memcheck --error-exitcode 9 "$check" small
  step "racecheck-$path" "${env[@]}" compute-sanitizer --tool racecheck --error-exitcode 9 "$check" small
  [[ -z $quick ]] && step "full-$path" "${env[@]}" "$check" full
  step "bench-$path" "${env[@]}" "$check" bench 512,2048,16384 64,128,256
done
if [[ -z $quick ]]; then
  step sdpa-side-by-side env FA2_LIBRARY="$build/libfa2.so" PYTHONPATH="$root/python" \
    python3 "$root/bench/sdpa_side_by_side.py" --dtypes bf16 --modes fwd,bwd \
    --impls fa2,fa2_sm80,flash,cudnn --warmup 10 --rep 40 --out "$out"
fi
echo "$failed step(s) failed; logs in $out"
exit $((failed != 0))

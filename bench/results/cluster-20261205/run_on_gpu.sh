#!/usr/bin/env bash
# First GPU run of the Hopper forward in clusters of two CTAs that share each
# key block's K / V by TMA multicast (sm90-fwd-cluster-multicast.patch, written
# 2026-12-05 while no GPU was lent; run the same day on an H100: correct, slower,
# dropped; bench/RESULTS.md). The patch selects the clusters per call
# with FA2_SM90_FWD_CLUSTER=2 (an experiment's switch, not for shipping), so one
# build holds both arms. Here (2 min with a warm ccache, ~10 cold, on 2 cores):
#   backends/cuda/tools/build_variant.sh \
#     bench/results/cluster-20261205/sm90-fwd-cluster-multicast.patch .dev/MC "32;64;96;128;192;256"
# On the GPU (carry .dev/MC), two calls of about 4-5 minutes each:
#   OUT=$OUT bash bench/results/cluster-20261205/run_on_gpu.sh .dev/MC check
#   OUT=$OUT bash bench/results/cluster-20261205/run_on_gpu.sh .dev/MC time
# check: correctness of the cluster path: `small` on the Hopper path with memcheck
#        and racecheck, conformance *cuda*, check_sass, and the `full` mode's edge
#        cases (a query block that sees no key beside one that does, one row, no keys);
# time:  the forward A/B by CUDA events (compare_builds.sh, both arms twice), then
#        sustained (power_probe) at the miss points, cuDNN in the same process.
set -uo pipefail
flat=$(cd "${1:?usage: run_on_gpu.sh BUILD_VARIANT_DIR check|time}" && pwd)
what=${2:?usage: run_on_gpu.sh BUILD_VARIANT_DIR check|time}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${OUT:-$PWD/cluster-logs}
mkdir -p "$out"
# verify_on_gpu.sh's layout, and one wrapper folder per arm for compare_builds.sh.
build=$(mktemp -d)
mkdir -p "$build/backends/cuda/tools" "$build/tests" "$build/C1" "$build/C2"
cp -a "$flat"/libfa2.so* "$build/"
cp "$flat/fa2_cuda_check" "$build/backends/cuda/tools/"
cp "$flat/fa2_conformance" "$build/tests/"
for arm in 1 2; do
  cp -a "$flat"/libfa2.so* "$build/C$arm/"
  printf '#!/bin/sh\nFA2_SM90_FWD_CLUSTER=%s exec %s "$@"\n' "$arm" \
    "$build/backends/cuda/tools/fa2_cuda_check" > "$build/C$arm/fa2_cuda_check"
  chmod +x "$build/C$arm/fa2_cuda_check"
done

if [[ $what == check ]]; then
  echo "== correctness, FA2_SM90_FWD_CLUSTER=2"
  FA2_SM90_FWD_CLUSTER=2 FA2_VERIFY_PATHS=default OUT=$out/verify \
    "$root/backends/cuda/tools/verify_on_gpu.sh" "$build" quick
  failed=$?
  for name in len1 q1-k1023 masked-rows blind-block sk0 diag-only varlen-window long1023; do
    FA2_SM90_FWD_CLUSTER=2 LD_LIBRARY_PATH=$build \
      "$build/backends/cuda/tools/fa2_cuda_check" full "$name" > "$out/full-$name.log" 2>&1
    rc=$?
    echo "full $name rc=$rc $(tail -n 1 "$out/full-$name.log")"
    ((rc == 0)) || failed=1
  done
  exit "$failed"
fi

echo "== forward A/B, CUDA events (C1: HEAD's kernel, C2: clusters)"
FA2_BENCH_FWD=1 "$root/backends/cuda/tools/compare_builds.sh" "1024,2048,4096,8192,16384" \
  "64,128,256" "$build/C1" "$build/C2" | tee "$out/ab-fwd.txt"

echo "== sustained (power_probe), alternated"
probe="--modes fwd --seconds 2.5 --shapes 64:2048:0,64:2048:1,64:4096:0,128:2048:0,128:8192:0"
FA2_LIBRARY=$build/libfa2.so PYTHONPATH=$root/python:$root/bench \
  python3 "$root/bench/results/probe-20261204d/probe_multi.py" \
  "FA2_SM90_FWD_CLUSTER=1|$probe --impls fa2,cudnn" "FA2_SM90_FWD_CLUSTER=2|$probe --impls fa2" \
  "FA2_SM90_FWD_CLUSTER=1|$probe --impls fa2" "FA2_SM90_FWD_CLUSTER=2|$probe --impls fa2,cudnn" \
  2>&1 | tee "$out/probe-fwd.txt"

#!/usr/bin/env bash
# Builds one variant of the library for the GPU machine: this checkout's HEAD
# with PATCH applied ("-": none) in a throwaway git worktree, for sm_90a and
# the head dims given, and copies libfa2.so*, fa2_cuda_check and
# fa2_conformance into OUT (a few MB at one or two head dims). Carry the OUT
# folders with a device call and time them there side by side:
#   backends/cuda/tools/build_variant.sh -      .dev/A "192;256"
#   backends/cuda/tools/build_variant.sh x.patch .dev/B "192;256"
#   (device) backends/cuda/tools/compare_builds.sh "1024,16384" "192,256" .dev/A .dev/B
# A ptxas spill or serialised wgmma fails the build (check_ptxas.sh).
set -euo pipefail
patch=${1:?usage: build_variant.sh PATCH|- OUT [HEAD_DIMS]}
out=${2:?usage: build_variant.sh PATCH|- OUT [HEAD_DIMS]}
dims=${3:-64;128;256}
repo=$(git rev-parse --show-toplevel)
[[ $patch == - ]] || patch=$(realpath "$patch")
scratch=$(mktemp -d)
tree=$scratch/tree
git -C "$repo" worktree add --detach -q "$tree" HEAD
trap 'git -C "$repo" worktree remove --force "$tree"; rm -rf "$scratch"' EXIT
[[ $patch == - ]] || git -C "$tree" apply "$patch"

export PATH=/usr/local/cuda/bin:$PATH
cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA2_WITH_CUDA=ON \
  -DFA2_CUDA_SM90=ON -DCMAKE_CUDA_ARCHITECTURES=90a-real "-DFA2_CUDA_HEAD_DIMS=$dims" \
  -DFA2_CUDA_DEV_TOOLS=ON -DFA2_CUDA_PTXAS_VERBOSE=ON -DFA2_BUILD_BENCH=OFF > /dev/null
ninja -C "$tree/build" fa2 fa2_cuda_check fa2_conformance > "$scratch/build.log" ||
  { tail -40 "$scratch/build.log"; exit 1; }
"$repo/backends/cuda/tools/check_ptxas.sh" "$scratch/build.log"
mkdir -p "$out"
cp -a "$tree"/build/libfa2.so* "$tree/build/backends/cuda/tools/fa2_cuda_check" \
  "$tree/build/tests/fa2_conformance" "$out/"
applied=""
[[ $patch == - ]] || applied=" + $(basename "$patch")"
echo "build_variant: $out ($(git -C "$repo" rev-parse --short HEAD)$applied, head dims $dims)"

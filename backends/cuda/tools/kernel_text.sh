#!/usr/bin/env bash
# Did a change move any kernel's machine code? Answered here, without a GPU:
# compiles the named instantiations (generated TU names, e.g. fwd_bf16_hd128)
# of two revisions to cubins and compares every kernel's .text section, with
# ptxas's registers and spill stores for each side:
#   backends/cuda/tools/kernel_text.sh REV_A REV_B TU...
# A revision is anything git names (HEAD, main, a hash) or `-` for the working
# tree. ARCH=80 compiles for sm_80 (the cuda-sm80 preset) instead of sm_90a.
# Each TU takes a few seconds (ccache does not apply: cubins are not cached).
set -euo pipefail
(($# >= 3)) || { echo "usage: kernel_text.sh REV_A REV_B TU..." >&2; exit 2; }
rev_a=$1 rev_b=$2
shift 2
repo=$(git rev-parse --show-toplevel)
scratch=$(mktemp -d)
trees=()
cleanup() {
  for t in "${trees[@]}"; do git -C "$repo" worktree remove --force "$t"; done
  rm -rf "$scratch"
}
trap cleanup EXIT
export PATH=/usr/local/cuda/bin:$PATH
if [[ ${ARCH:-90} == 80 ]]; then
  arch_flags=(-DCMAKE_CUDA_ARCHITECTURES=80-real -DFA2_CUDA_SM90=OFF)
else
  arch_flags=(-DCMAKE_CUDA_ARCHITECTURES=90a-real -DFA2_CUDA_SM90=ON)
fi

# tree_of REV NAME: a source tree of REV (configured into NAME/build), path on stdout.
tree_of() {
  local rev=$1 tree=$repo
  if [[ $rev != - ]]; then
    tree=$scratch/$2
    git -C "$repo" worktree add --detach -q "$tree" "$rev"
  fi
  cmake -S "$tree" -B "$scratch/$2-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA2_WITH_CUDA=ON \
    "${arch_flags[@]}" -DFA2_CUDA_PTXAS_VERBOSE=ON -DFA2_BUILD_BENCH=OFF > /dev/null
  echo "$tree"
}
tree_a=$(tree_of "$rev_a" a)
[[ $rev_a == - ]] || trees+=("$tree_a")
tree_b=$(tree_of "$rev_b" b)
[[ $rev_b == - ]] || trees+=("$tree_b")

# cubin SIDE TU: compiles TU with its build's own command, -c turned into -cubin;
# ptxas's report goes to SIDE-TU.log.
cubin() {
  local build=$scratch/$1-build obj=backends/cuda/CMakeFiles/fa2_backend_cuda.dir/generated/$2.cu.o
  local cmd
  cmd=$(ninja -C "$build" -t commands "$obj" | tail -n 1)
  [[ $cmd == *nvcc* ]] || { echo "kernel_text: no TU $2 (head dim built?)" >&2; exit 2; }
  cmd=$(sed -E 's/ -MD -MT [^ ]+ -MF [^ ]+//; s/ -c / -cubin /; s/ -o [^ ]+$//' <<< "$cmd")
  (cd "$build" && eval "$cmd -o $scratch/$1-$2.cubin") > "$scratch/$1-$2.log" 2>&1 ||
    { cat "$scratch/$1-$2.log" >&2; exit 1; }
}
# ptxas_line LOG KERNEL: "N regs, S B spilled"
ptxas_line() {
  awk -v k="$2" '
    /Compiling entry function/ { on = index($0, "\047" k "\047") > 0 }
    on && /bytes spill stores/ { spill = $5 }
    on && /Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") regs = $(i + 1); on = 0 }
    END { printf "%s regs, %s B spilled", regs, spill }' "$1"
}

for tu in "$@"; do
  cubin a "$tu"
  cubin b "$tu"
  for section in $(readelf -S -W "$scratch/a-$tu.cubin" 2>/dev/null | grep -o ' \.text\.[^ ]*' | sort -u); do
    kernel=${section#.text.}
    if cmp -s <(readelf -x "$section" "$scratch/a-$tu.cubin" 2>/dev/null) \
              <(readelf -x "$section" "$scratch/b-$tu.cubin" 2>/dev/null); then
      verdict=same
    else
      verdict=DIFFERS
    fi
    printf '%-8s %-24s A: %s | B: %s\n' "$verdict" "$tu" "$(ptxas_line "$scratch/a-$tu.log" "$kernel")" \
      "$(ptxas_line "$scratch/b-$tu.log" "$kernel")"
    echo "         $kernel"
  done
done

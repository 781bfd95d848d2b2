#!/bin/sh
# Checks the AMD GPU code objects of the HIP backend without a GPU:
#  1. every kernel uses no scratch memory: private_segment_fixed_size 0 in
#     the code object metadata (.note), and no scratch_* or buffer
#     load/store instructions (the kernels address memory with global_*
#     and ds_*; on these targets buffer ops on s[0:3] are register spills);
#  2. the attention kernels (fwd_kernel, bwd_kernel) execute v_mfma
#     instructions inside a loop (between a backward branch and its target).
# Usage: check_code_objects.sh libfa2_backend_hip.a | kernel objects...
# Needs roc-obj-ls / roc-obj-extract (Debian: hipcc) and llvm-objdump /
# llvm-readelf of LLVM 15 (Debian: llvm-15).
set -eu

tool() {
  for candidate in "$1-15" "$1"; do
    if command -v "$candidate" >/dev/null 2>&1; then echo "$candidate"; return; fi
  done
  echo "check_code_objects: $1 not found" >&2
  exit 2
}
OBJDUMP=$(tool llvm-objdump)
READELF=$(tool llvm-readelf)
for t in roc-obj-ls roc-obj-extract ar; do
  command -v "$t" >/dev/null 2>&1 || { echo "check_code_objects: $t not found" >&2; exit 2; }
done
[ $# -gt 0 ] || { echo "usage: $0 libfa2_backend_hip.a | objects..." >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/objects" "$work/code"

# Gather host objects (an archive is unpacked), then their device code objects.
for input in "$@"; do
  case "$input" in
    *.a) archive=$(realpath "$input") && (cd "$work/objects" && ar x "$archive") ;;
    *) cp "$input" "$work/objects/" ;;
  esac
done
for object in "$work"/objects/*; do
  roc-obj-ls "$object" 2>/dev/null | awk '$2 ~ /amdgcn/ { print $3 }' >>"$work/uris"
done
if [ ! -s "$work/uris" ]; then
  echo "FAIL: no AMD GPU code object found in $*"
  exit 1
fi
(cd "$work/code" && roc-obj-extract -o . <"$work/uris")

status=0
for code in "$work"/code/*; do
  label=$(basename "$code")
  # 1a. Metadata: kernel names with their private (scratch) segment size.
  "$READELF" --notes "$code" | awk -v label="$label" '
    /\.name:/ { name = $2 }
    /\.private_segment_fixed_size:/ { size[name] = $2 }
    END {
      bad = 0
      for (n in size) if (size[n] != 0) {
        printf "FAIL %s: %s uses %s bytes of scratch\n", label, n, size[n]; bad = 1
      }
      exit bad
    }' || status=1

  # 1b + 2. Disassembly: scratch instructions, and v_mfma inside loops.
  "$OBJDUMP" -d "$code" | awk -v label="$label" '
    function hex(s,    i, v) {
      v = 0; s = tolower(s)
      for (i = 1; i <= length(s); ++i) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return v
    }
    function finish(    i, j, looped) {
      if (fn == "" || fn !~ /(fwd|bwd)_kernel/) return
      looped = 0
      for (i = 0; i < nmfma; ++i)
        for (j = 0; j < nloops; ++j)
          if (mfma[i] >= loop_from[j] && mfma[i] <= loop_to[j]) { looped++; break }
      if (looped == 0) { printf "FAIL %s: %s has no v_mfma inside a loop (%d in total)\n", label, fn, nmfma; bad = 1 }
      else printf "ok   %s: %s: %d v_mfma, %d inside loops\n", label, fn, nmfma, looped
    }
    /^[0-9a-f]+ <.*>:$/ {
      finish()
      fn = $2; sub(/^</, "", fn); sub(/>:$/, "", fn)
      start = hex($1); nmfma = 0; nloops = 0
      next
    }
    {
      if (match($0, /\/\/ [0-9A-Fa-f]+:/) == 0) next
      addr = hex(substr($0, RSTART + 3, RLENGTH - 4))
      op = $1
      if ((op ~ /^scratch_/ || op ~ /^buffer_(load|store)/) && !(fn in spilled)) {
        printf "FAIL %s: %s accesses scratch: %s\n", label, fn, op; spilled[fn] = 1; bad = 1
      }
      if (op ~ /^v_mfma/) mfma[nmfma++] = addr
      if (op ~ /^s_(c)?branch/ && match($0, /\+0x[0-9a-fA-F]+>/)) {
        target = start + hex(substr($0, RSTART + 3, RLENGTH - 4))
        if (target <= addr) { loop_from[nloops] = target; loop_to[nloops] = addr; nloops++ }
      }
    }
    END { finish(); exit bad }' || status=1
done

if [ "$status" -eq 0 ]; then
  echo "PASS: $(ls "$work/code" | wc -l) code objects, no scratch, v_mfma in the attention loops"
fi
exit "$status"

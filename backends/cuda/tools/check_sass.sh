#!/usr/bin/env bash
# On a machine with cuobjdump: every Hopper kernel (sm90 fwd_kernel /
# bwd_kernel) in the library's sm_90a code must run its GEMMs as HGMMA
# (wgmma), in no more warpgroup fences than a serialised one would need.
#   backends/cuda/tools/check_sass.sh LIBRARY   (e.g. build/libfa2.so)
# Prints one line per kernel: HGMMA count, WARPGROUP.DEPBAR/ARRIVE count.
set -euo pipefail
lib=${1:?usage: check_sass.sh LIBRARY}
cuobjdump --dump-sass "$lib" | awk '
  /code for sm_/ { arch = $NF }
  /Function :/ { fn = $NF; if (arch == "sm_90a" && fn ~ /4sm90[0-9]*(fwd|bwd)_kernel/) kernels[fn] = 1 }
  arch == "sm_90a" && (fn in kernels) && /HGMMA/ { hgmma[fn]++ }
  arch == "sm_90a" && (fn in kernels) && /WARPGROUP\.(DEPBAR|ARRIVE)/ { fence[fn]++ }
  END {
    n = 0; bad = 0
    for (fn in kernels) {
      n++
      printf "%-8s HGMMA %3d  warpgroup fences %3d  %s\n", (hgmma[fn] > 0 && fence[fn] < hgmma[fn]) ? "ok" : "BAD", hgmma[fn], fence[fn], fn
      if (!(hgmma[fn] > 0 && fence[fn] < hgmma[fn])) bad++
    }
    if (n == 0) { print "check_sass: no sm_90a Hopper kernels found (cuobjdump output format?)"; exit 2 }
    printf "check_sass: %d Hopper kernels, %d without HGMMA or serialised\n", n, bad
    exit bad > 0
  }'

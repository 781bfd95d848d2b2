#!/usr/bin/env bash
# Fails when a build log with ptxas reports (-DFA2_CUDA_PTXAS_VERBOSE=ON)
# shows a kernel that spills registers or whose wgmma instructions ptxas
# serialises (C75xx "Potential Performance Loss": an accumulator touched
# while its wgmma may run, too few registers, ...). Neither breaks the
# build, both cost a large part of a kernel's speed:
#   backends/cuda/tools/check_ptxas.sh BUILD_LOG
set -euo pipefail
log=${1:?usage: check_ptxas.sh BUILD_LOG}
awk '
  /Compiling entry function/ { kernel = $0; sub(/.*function \047/, "", kernel); sub(/\047.*/, "", kernel); kernels++ }
  /bytes spill stores/ && ($5 != 0 || $9 != 0) { print "spill: " kernel ": " $0; bad++ }
  /\(C75[0-9][0-9]\)/ { print "ptxas: " $0; bad++ }
  END {
    if (kernels == 0) { print "check_ptxas: no ptxas reports in the log (FA2_CUDA_PTXAS_VERBOSE=ON?)"; exit 2 }
    printf "check_ptxas: %d kernel compilations, %d problem(s)\n", kernels, bad
    exit bad > 0
  }' "$log"

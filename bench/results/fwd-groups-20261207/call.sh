#!/usr/bin/env bash
# 2026-12-07 session: does the causal forward's static balance cost time under the cap? G1 =
# G1.patch (EXPERIMENT: FA2_FWD_GROUP_HEADS=g orders a masked Hopper forward's tiles by groups of
# g heads, longest rows first inside a group; unset = HEAD's order, with the d64 main loop moved by
# ptxas, so G1 unset is the baseline for the order). Model (16k tokens, hidden 2048, d64, 132
# CTAs, snake rounds), max / mean work a CTA: 1k 1.031 (g1), 1.024 (g24), 1.031 (g16); 2k 1.031,
# 1.009, 1.482; 4k 1.031, 1.146, 1.232.
set -u
R=$OUT
tar xJf .dev/carry/c5.txz -C .dev && tar xJf .dev/carry/c8.txz -C .dev
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
D=$PWD/.dev
for g in 16 24; do
  mkdir -p $D/G$g && cp -a $D/G1/libfa2.so* $D/G$g/
  printf '#!/bin/bash\nFA2_FWD_GROUP_HEADS=%s exec %s/G1/fa2_cuda_check "$@"\n' $g $D \
    > $D/G$g/fa2_cuda_check && chmod +x $D/G$g/fa2_cuda_check
done
for g in 24 7; do
  FA2_FWD_GROUP_HEADS=$g LD_LIBRARY_PATH=$D/G1 timeout 40 $D/G1/fa2_cuda_check small /d64 \
    > $R/small-g$g.txt 2>&1
  echo "small d64 g$g rc $?: $(tail -n 1 $R/small-g$g.txt)"
done
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 150 backends/cuda/tools/compare_builds.sh "1024,2048,4096" "64" \
  $D/F1 $D/G1 $D/G24 $D/G16 2>&1 | tee $R/ab.txt
echo "== sustained t=${SECONDS}s"
export PYTHONPATH=python:bench
for cfg in G1: G1:24 F1: G1:24 G1:; do
  lib=${cfg%:*} g=${cfg#*:}
  echo "-- $lib g=${g:-unset}"
  FA2_FWD_GROUP_HEADS=$g FA2_LIBRARY=$D/$lib/libfa2.so timeout 40 python3 bench/power_probe.py \
    --modes fwd --shapes 64:2048:1 --impls fa2,cudnn --seconds 2.5 2>&1 | grep -E "^fwd"
done | tee $R/sustained.txt
echo "done ${SECONDS}s"

#!/usr/bin/env bash
# 2026-12-06 session 08:31 call 1: the sm80 backward's P / dS stores and next-tile copies.
# B = HEAD 8c5a6e1; M1 = mask on S before the exponent, each row's P / dS stored as computed;
# M2 = M1 with every row's lse / D read before the first store; C = next Q / dO copies behind
# S / dP's loads (d64 only); MC = M2 + C. Builds: build_variant.sh, head dims 64 / 128 / 256.
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/bw.txz -C .dev/bw
export PYTHONPATH=python:bench FA2_CUDA_PATH=sm80
D=.dev/bw
echo "== correctness t=${SECONDS}s"
for v in M2 MC; do
  for d in 64 128 256; do
    LD_LIBRARY_PATH=$D/$v timeout 60 $D/$v/fa2_cuda_check small /d$d > $R/small-$v-$d.txt 2>&1; echo "small $v d$d rc $?: $(tail -n 1 $R/small-$v-$d.txt)"
  done
done
echo "== events d64 t=${SECONDS}s"
timeout 240 backends/cuda/tools/compare_builds.sh "1024,2048,4096,8192,16384" "64" $D/B $D/C $D/M1 $D/M2 $D/MC 2>&1 | tee $R/ab64-1.txt
echo "== events d128 d256 t=${SECONDS}s"
timeout 150 backends/cuda/tools/compare_builds.sh "2048,8192,16384" "128,256" $D/MC $D/M2 $D/B 2>&1 | tee $R/ab128-256.txt
echo "== events d64 again t=${SECONDS}s"
timeout 200 backends/cuda/tools/compare_builds.sh "2048,8192,16384" "64" $D/MC $D/M2 $D/C $D/B 2>&1 | tee $R/ab64-2.txt
echo "== sustained t=${SECONDS}s"
for lib in MC B; do
  echo "-- $lib"; FA2_LIBRARY=$D/$lib/libfa2.so timeout 60 python3 bench/power_probe.py --modes bwd --shapes 64:8192:0,64:16384:0 --impls fa2_sm80,flash --seconds 2.5 2>&1 | tee -a $R/probe-$lib.txt | grep -E "^bwd"
done
echo "done ${SECONDS}s"

#!/usr/bin/env bash
# HEAD before (H0) and the shipped blind-last forward (BF): sm80 path d256 against flash, one process each.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
for b in H0 BF; do
  echo "-- $b, t=${SECONDS}s"
  FA2_LIBRARY=.dev/$b/libfa2.so PYTHONPATH=python timeout 100 python3 bench/sdpa_side_by_side.py --dtypes bf16 \
    --head-dims 256 --causal 1 --seqlens 512,1024,2048 --modes fwd --impls fa2_sm80,flash --rounds 2 \
    --out $OUT/sxs-$b 2>&1 | grep -E "^bf16" | sort -u
done
echo "== sustained, t=${SECONDS}s"
for b in H0 BF; do
  FA2_LIBRARY=.dev/$b/libfa2.so timeout 60 python3 bench/power_probe.py --modes fwd --seconds 2.5 \
    --shapes 256:512:1 --impls fa2_sm80,flash 2>&1 | tail -n 2 | sed "s/^/$b /"
done
echo "done ${SECONDS}s"

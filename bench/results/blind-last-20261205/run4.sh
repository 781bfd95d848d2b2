#!/usr/bin/env bash
# The shipped blind-last forward (BF) and HEAD before it (H0) on the sm80 path at d256, flash in
# the same process; then ncu of the d256 causal 512 forward, ours against flash's.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
for b in H0 BF; do
  echo "-- $b, t=${SECONDS}s"
  FA2_LIBRARY=.dev/$b/libfa2.so PYTHONPATH=python timeout 200 python3 bench/sdpa_side_by_side.py --dtypes bf16 \
    --head-dims 256 --causal 0,1 --seqlens 512,1024,2048,4096,16384 --modes fwd --impls fa2_sm80,flash --rounds 2 \
    --out $OUT/sxs-$b 2>&1 | grep -E "^bf16" | sort -u
done
echo "== sustained BF, t=${SECONDS}s"
FA2_LIBRARY=.dev/BF/libfa2.so timeout 120 python3 bench/power_probe.py --modes fwd --seconds 2.5 \
  --shapes 256:512:1,256:1024:1 --impls fa2_sm80,flash 2>&1 | tail -n 4
echo "== ncu d256 causal 512, t=${SECONDS}s"
OUT=$OUT timeout 300 backends/cuda/tools/profile_vs_peers.sh .dev/BF 256 512 1 fwd fa2_sm80,flash 2>&1 | tail -n 60
echo "done ${SECONDS}s"

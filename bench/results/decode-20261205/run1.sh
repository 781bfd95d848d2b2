#!/usr/bin/env bash
# HEAD (VF = f7333d5's code) on the decode grid next to SDPA flash / cudnn; then the sm80 d256
# causal forward side by side and sustained (the blind-last kernel's first figures on this card).
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export FA2_LIBRARY=.dev/VF/libfa2.so PYTHONPATH=python
echo "== decode, t=${SECONDS}s"
timeout 240 python3 bench/sdpa_side_by_side.py --decode --impls fa2,fa2_sm80,flash,cudnn --out $OUT 2>&1 | tail -n 60
echo "== d256 causal sm80 side by side, t=${SECONDS}s"
timeout 120 python3 bench/sdpa_side_by_side.py --dtypes bf16 --head-dims 256 --causal 1 --seqlens 512,1024,2048 \
  --modes fwd --impls fa2_sm80,flash --rounds 2 --out $OUT/sxs 2>&1 | grep -E "^bf16" | sort -u
timeout 60 python3 bench/power_probe.py --modes fwd --seconds 2.5 --shapes 256:512:1,256:1024:1 --impls fa2_sm80,flash 2>&1 | tail -n 4
echo "done ${SECONDS}s"

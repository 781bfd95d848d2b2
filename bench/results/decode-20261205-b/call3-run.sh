#!/usr/bin/env bash
# Call 3: the d64 decoding plan. N ({16,128,64,4,2}), A (HEAD: the forward's decode walk, 64 rows),
# W1 {16,128,64,4,3}, W2 {16,64,64,4,4}, W3 {16,128,64,8,2}; flash / cudnn beside N and A;
# two rounds in rotated order.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/gpu.txt
export PYTHONPATH=python
for round in 1 2; do
  order="N A W1 W2 W3"; [[ $round == 2 ]] && order="W3 W2 W1 A N"
  for b in $order; do
    [[ $SECONDS -gt 300 ]] && { echo "skip $b (time)"; continue; }
    impls=fa2; [[ $b == A || $b == N ]] && impls=fa2,flash,cudnn
    echo "== round $round $b t=${SECONDS}s"
    FA2_LIBRARY=.dev/s4/$b/libfa2.so timeout 60 python3 bench/sdpa_side_by_side.py --decode --decode-head-dim 64 --impls $impls --out $OUT/$b-$round > $OUT/grid-$b-$round.log 2>&1
    grep -E "^ +[0-9]" $OUT/grid-$b-$round.log | sort -u -k1,1n -k2,2n -k3,3 | sed "s/^/$b $round /" >> $OUT/grid.txt
  done
done
grep fa2 $OUT/grid.txt | awk '{print $3, $4, $1, $2, $6}' | sort -k1,1n -k2,2n -k3,3 -k4,4
echo "done ${SECONDS}s"

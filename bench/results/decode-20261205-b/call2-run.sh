#!/usr/bin/env bash
# Call 2: the d64 and d256 decode grids, A (HEAD) against N (decode kernel), flash / cudnn beside
# both; decode_probe for N at batch 1 and 8; python tests on CUDA with N.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $OUT/gpu.txt
export PYTHONPATH=python
for d in 64 256; do
  for b in A N; do
    [[ $d == 256 && $b == A ]] && continue  # A was built for 64;128 only
    [[ $SECONDS -gt 420 ]] && { echo "skip $b d$d (time)"; continue; }
    echo "== grid d$d $b t=${SECONDS}s"
    FA2_LIBRARY=.dev/s4/$b/libfa2.so timeout 100 python3 bench/sdpa_side_by_side.py --decode --decode-head-dim $d --impls fa2,flash,cudnn --out $OUT/$b-d$d > $OUT/grid-d$d-$b.log 2>&1
    grep -E "^ +[0-9]" $OUT/grid-d$d-$b.log | sort -u -k1,1n -k2,2n -k3,3 | sed "s/^/$b d$d /" | tee -a $OUT/grid.txt
  done
done
echo "== probe N t=${SECONDS}s"
FA2_LIBRARY=.dev/s4/N/libfa2.so timeout 120 python3 bench/decode_probe.py 1:1024 1:4096 1:16384 8:1024 32:16384 2>&1 | tee $OUT/probe-N.txt | cut -c1-250
echo "== pytest N t=${SECONDS}s"
FA2_LIBRARY=.dev/s4/N/libfa2.so timeout 120 python3 -m pytest -q -x python/tests 2>&1 | tail -n 3 | tee $OUT/pytest-N.txt
echo "done ${SECONDS}s"

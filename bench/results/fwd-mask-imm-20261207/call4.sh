#!/usr/bin/env bash
# 2026-12-07 09:00– session, the committed form (FN = HEAD 5c679d9 + final.patch, SASS identical
# to M1): compute-sanitizer at d128 / d256 (d64: call3.sh), then the bf16 forward side by side at
# d64 / d128 with its SDPA peers in the same process.
set -u
R=$OUT
D=.dev
tar xJf $D/carry/c12.txz -C $D
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
for tool in memcheck racecheck; do for d in 128 256; do
  (LD_LIBRARY_PATH=$D/FN timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 \
    $D/FN/fa2_cuda_check small /d$d > $R/$tool-d$d.txt 2>&1
   echo "$tool d$d rc=$? $(tail -n 1 $R/$tool-d$d.txt)" > $R/$tool-d$d.sum) &
done; done
wait
cat $R/*.sum
echo "== sxs t=${SECONDS}s"
mkdir -p $R/sxs
FA2_LIBRARY=$D/FN/libfa2.so PYTHONPATH=python timeout 200 python3 bench/sdpa_side_by_side.py \
  --dtypes bf16 --head-dims 64,128 --modes fwd --impls fa2,fa2_sm80,flash,cudnn \
  --warmup 10 --rep 40 --rounds 2 --out $R/sxs > $R/sxs/sxs.txt 2>&1
tail -n 40 $R/sxs/sxs.txt
echo "done ${SECONDS}s"

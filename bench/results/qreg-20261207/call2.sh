#!/usr/bin/env bash
# 2026-12-07 10:33– session, after call1.sh (Q1: d128 +1..4% in CUDA events at 1k-4k, sustained
# causal 2k +2%; d64 level): Q2.patch = Q in registers at d128's 128-key plan only (its d128
# kernels' SASS identical to Q1's and to the commit's, every other kernel identical to HEAD's).
# compute-sanitizer on Q2 at d128, then CUDA events against F1 (HEAD) in the other order.
set -u
R=$OUT
D=.dev
tar xJf $D/carry/c5.txz -C $D && tar xJf $D/carry/c14.txz -C $D
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
for tool in memcheck racecheck; do
  (LD_LIBRARY_PATH=$D/Q2 timeout 130 compute-sanitizer --tool $tool --error-exitcode 9 \
    $D/Q2/fa2_cuda_check small /d128 > $R/$tool-d128.txt 2>&1
   echo "$tool d128 rc=$? $(tail -n 1 $R/$tool-d128.txt)" > $R/$tool-d128.sum) &
done
wait
cat $R/*.sum
echo "== events t=${SECONDS}s"
FA2_BENCH_FWD=1 timeout 80 backends/cuda/tools/compare_builds.sh "1024,2048,4096" \
  "128" $D/Q2 $D/F1 2>&1 | tee $R/ba.txt
echo "done ${SECONDS}s"

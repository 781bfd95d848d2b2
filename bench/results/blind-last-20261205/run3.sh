#!/usr/bin/env bash
# The blind-last forward as shipped (BF: its own translation units; every other kernel
# SASS-identical to HEAD's) against HEAD (H0): timing, flash in the same process, checks.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
echo "== compare_builds (CUDA events, forward, sm80 path)"
FA2_CUDA_PATH=sm80 FA2_BENCH_FWD=1 backends/cuda/tools/compare_builds.sh "512,1024,2048" "192,256" .dev/H0 .dev/BF
echo "== side by side, sm80 path d256 forward, t=${SECONDS}s"
for b in H0 BF; do
  echo "-- $b"
  FA2_LIBRARY=.dev/$b/libfa2.so PYTHONPATH=python timeout 200 python3 bench/sdpa_side_by_side.py --dtypes bf16 \
    --head-dims 256 --causal 0,1 --seqlens 512,1024,2048,4096 --modes fwd --impls fa2_sm80,flash --rounds 2 \
    --out $OUT/sxs-$b 2>&1 | grep -E "^bf16"
done
echo "== sustained, t=${SECONDS}s"
FA2_LIBRARY=.dev/BF/libfa2.so timeout 120 python3 bench/power_probe.py --modes fwd --seconds 2.5 \
  --shapes 256:512:1,256:1024:1 --impls fa2_sm80,flash 2>&1 | tail -n 4
echo "== checks of BF, t=${SECONDS}s"
b=BF
for path in sm80 default; do
  (FA2_CUDA_PATH=$([[ $path == sm80 ]] && echo sm80) LD_LIBRARY_PATH=.dev/$b .dev/$b/fa2_conformance --gtest_filter='*cuda*' > $OUT/conf-$path.log 2>&1; echo "conformance $path rc=$? $(grep -E 'PASSED|FAILED' $OUT/conf-$path.log | tail -n2 | tr '\n' ' ')") &
done
export FA2_CUDA_PATH=sm80
for d in 192 256; do
  (LD_LIBRARY_PATH=.dev/$b .dev/$b/fa2_cuda_check small /d$d > $OUT/small-$d.txt 2>&1; echo "small d$d rc=$? $(tail -n1 $OUT/small-$d.txt)") &
  (LD_LIBRARY_PATH=.dev/$b compute-sanitizer --tool racecheck --error-exitcode 9 .dev/$b/fa2_cuda_check small /d$d > $OUT/race-$d.txt 2>&1; echo "racecheck d$d rc=$? $(grep -E 'SUMMARY' $OUT/race-$d.txt)") &
  (LD_LIBRARY_PATH=.dev/$b compute-sanitizer --tool memcheck --error-exitcode 9 .dev/$b/fa2_cuda_check small /d$d > $OUT/mem-$d.txt 2>&1; echo "memcheck d$d rc=$? $(grep -E 'SUMMARY' $OUT/mem-$d.txt)") &
done
wait
echo "done ${SECONDS}s"

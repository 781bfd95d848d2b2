#!/usr/bin/env bash
# sm80 path, d192 / d256 forward: HEAD (H0) against the blind block last as a kernel policy for
# masked calls of <= 8 query blocks (BT, all head dims). Timing, peers, then the checks.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export FA2_CUDA_PATH=sm80
echo "== compare_builds (CUDA events, forward)"
FA2_BENCH_FWD=1 backends/cuda/tools/compare_builds.sh "512,1024,2048,4096,16384" "192,256" .dev/H0 .dev/BT
echo "== sustained against flash (same process), t=${SECONDS}s"
for b in H0 BT; do
  echo "-- $b d256"
  FA2_LIBRARY=.dev/$b/libfa2.so timeout 120 python3 bench/power_probe.py --modes fwd --seconds 2.5 \
    --shapes 256:512:1,256:1024:1 --impls fa2_sm80,flash 2>&1 | tail -n 6
  echo "-- $b d192"
  FA2_LIBRARY=.dev/$b/libfa2.so timeout 120 python3 bench/power_probe.py --modes fwd --seconds 2.5 \
    --hidden 3072 --shapes 192:512:1 --impls fa2_sm80,flash 2>&1 | tail -n 4
done
echo "== side by side, d256 causal, t=${SECONDS}s"
for b in H0 BT; do
  echo "-- $b"
  FA2_LIBRARY=.dev/$b/libfa2.so PYTHONPATH=python timeout 150 python3 bench/sdpa_side_by_side.py --dtypes bf16 \
    --head-dims 256 --causal 1 --seqlens 512,1024,2048 --modes fwd --impls fa2_sm80,flash --rounds 2 \
    --out $OUT/sxs-$b 2>&1 | tail -n 8
done
echo "== checks of BT, t=${SECONDS}s"
b=BT
(LD_LIBRARY_PATH=.dev/$b .dev/$b/fa2_conformance --gtest_filter='*cuda*' > $OUT/conf-$b.log 2>&1; echo "conformance sm80 rc=$? $(grep -E 'PASSED|FAILED' $OUT/conf-$b.log | tail -n2 | tr '\n' ' ')") &
for d in 192 256; do
  (LD_LIBRARY_PATH=.dev/$b .dev/$b/fa2_cuda_check small /d$d > $OUT/small-$b-$d.txt 2>&1; echo "small d$d rc=$? $(tail -n1 $OUT/small-$b-$d.txt)") &
  (LD_LIBRARY_PATH=.dev/$b compute-sanitizer --tool racecheck --error-exitcode 9 .dev/$b/fa2_cuda_check small /d$d > $OUT/race-$b-$d.txt 2>&1; echo "racecheck d$d rc=$? $(grep -E 'SUMMARY' $OUT/race-$b-$d.txt)") &
  (LD_LIBRARY_PATH=.dev/$b compute-sanitizer --tool memcheck --error-exitcode 9 .dev/$b/fa2_cuda_check small /d$d > $OUT/mem-$b-$d.txt 2>&1; echo "memcheck d$d rc=$? $(grep -E 'SUMMARY' $OUT/mem-$b-$d.txt)") &
done
wait
grep -c "blind\|causal" $OUT/small-BT-256.txt
echo "done ${SECONDS}s"

#!/usr/bin/env bash
# sm80 d192 / d256 causal forward: HEAD (H0) against the blind later diagonal block last,
# in-loop with a warp-uniform skip (BU) and peeled (BP). Timing first, then the checks.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export FA2_CUDA_PATH=sm80
echo "== compare_builds (CUDA events, forward)"
FA2_BENCH_FWD=1 backends/cuda/tools/compare_builds.sh "512,1024,2048,4096,16384" "192,256" .dev/H0 .dev/BU .dev/BP
echo "== sustained against flash (same process), t=${SECONDS}s"
for b in H0 BU BP; do
  echo "-- $b"
  FA2_LIBRARY=.dev/$b/libfa2.so timeout 200 python3 bench/power_probe.py --modes fwd --seconds 2.5 \
    --shapes 256:512:1,192:512:1,256:1024:1 --impls fa2_sm80,flash 2>&1 | tail -n 12
done
echo "== checks, t=${SECONDS}s"
for b in BU BP; do
  for d in 192 256; do
    (LD_LIBRARY_PATH=.dev/$b .dev/$b/fa2_cuda_check small /d$d > $OUT/small-$b-$d.log 2>&1; echo "small $b d$d rc=$? $(tail -n1 $OUT/small-$b-$d.log)") &
    (LD_LIBRARY_PATH=.dev/$b compute-sanitizer --tool racecheck --error-exitcode 9 .dev/$b/fa2_cuda_check small /d$d > $OUT/race-$b-$d.log 2>&1; echo "racecheck $b d$d rc=$? $(grep -E 'SUMMARY' $OUT/race-$b-$d.log)") &
    (LD_LIBRARY_PATH=.dev/$b compute-sanitizer --tool memcheck --error-exitcode 9 .dev/$b/fa2_cuda_check small /d$d > $OUT/mem-$b-$d.log 2>&1; echo "memcheck $b d$d rc=$? $(grep -E 'SUMMARY' $OUT/mem-$b-$d.log)") &
  done
done
wait
echo "done ${SECONDS}s"

#!/usr/bin/env bash
# 2026-12-07 23:37– session, first call (~520 s). Builds (build_variant.sh, d64 / d128 / d256):
#   F4 = HEAD's kernels (2f9fc73; HEAD 51d27b5 changed only comments), .dev/carry/c24.txz
#   D1 = HEAD + pdl.patch: the backward's main kernel and dQ conversion as programmatic dependents
#   K1 = HEAD + kvdone.patch: the same (the main kernels wait at their start) and the Hopper
#        kernels count the keys whose dQ is added, so the conversion of a head runs on the SMs
#        the main grid's last CTAs leave (D1 and K1 in .dev/carry/c25.txz)
#  1. beside each other: conformance of F4, K1 and D1; `small` of K1 per head dim; racecheck of
#     F4's sm80 d256 backward (dQ row pairs, new 2026-12-07) and of K1's d128
#  2. the bf16 side by side with every SDPA peer (K1 if its conformance passed, else F4)
#  3. CUDA events, F4, D1 and K1 alternated, 512-4k, d64 / d128
#  4. the backward kernel by kernel (torch.profiler) of F4, d128 2k / 4k / 16k, d64 causal 1k, vs cuDNN
set -u
R=$OUT
L=$R/log.txt
tar xJf .dev/carry/c24.txz -C .dev
tar xJf .dev/carry/c25.txz -C .dev
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv,noheader | tee $L
F=.dev/F4 D=.dev/D1 K=.dev/K1
LD_LIBRARY_PATH=$F timeout 200 $F/fa2_conformance --gtest_filter='*cuda*' > /tmp/conf-F4.txt 2>&1 &
LD_LIBRARY_PATH=$K timeout 200 $K/fa2_conformance --gtest_filter='*cuda*' > $R/conf-K1.txt 2>&1 &
LD_LIBRARY_PATH=$D timeout 200 $D/fa2_conformance --gtest_filter='*cuda*' > /tmp/conf-D1.txt 2>&1 &
for d in 64 128 256; do
  LD_LIBRARY_PATH=$K timeout 200 $K/fa2_cuda_check small /d$d > /tmp/small-K1-d$d.txt 2>&1 &
done
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$F timeout 200 compute-sanitizer --tool racecheck \
  --error-exitcode 9 $F/fa2_cuda_check small /d256 > /tmp/race-F4-sm80-d256.txt 2>&1 &
LD_LIBRARY_PATH=$K timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 \
  $K/fa2_cuda_check small /d128 > /tmp/race-K1-d128.txt 2>&1 &
wait
cat /tmp/small-K1-d*.txt > $R/small-K1.txt
summary() { echo "$(grep -E 'cases failed' $1 | tr '\n' ' ')$(grep -E 'SUMMARY' $1) $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]' $1 | tr '\n' ' ')"; }
for d in 64 128 256; do echo "K1 small /d$d: $(summary /tmp/small-K1-d$d.txt)"; done | tee -a $L
echo "F4 conformance: $(summary /tmp/conf-F4.txt)" | tee -a $L
echo "K1 conformance: $(summary $R/conf-K1.txt)" | tee -a $L
echo "D1 conformance: $(summary /tmp/conf-D1.txt)" | tee -a $L
echo "F4 racecheck sm80 small /d256: $(summary /tmp/race-F4-sm80-d256.txt)" | tee -a $L
echo "K1 racecheck small /d128: $(summary /tmp/race-K1-d128.txt) ${SECONDS}s" | tee -a $L
grep -E '^\[  FAILED' $R/conf-K1.txt /tmp/conf-D1.txt | head -8 >> $L
S=$F
grep -qE '^\[  PASSED  \] 273 tests' $R/conf-K1.txt && S=$K
echo "side by side of $S" | tee -a $L
export FA2_LIBRARY=$S/libfa2.so PYTHONPATH=python:bench
mkdir -p $R/bf16
timeout 150 python3 bench/sdpa_side_by_side.py --dtypes bf16 \
  --head-dims 64,128,256 --modes fwd,bwd --impls fa2,fa2_sm80,flash,cudnn \
  --warmup 10 --rep 40 --rounds 2 --out $R/bf16 > $R/bf16/sxs-bf16.txt 2>&1
echo "sxs rc $? ${SECONDS}s" | tee -a $L
timeout 160 backends/cuda/tools/compare_builds.sh "512,1024,2048,4096" "64,128" $F $D $K 2>&1 |
  tee -a $L
echo "events ${SECONDS}s" | tee -a $L
FA2_LIBRARY=$F/libfa2.so timeout 60 python3 bench/kernel_breakdown.py \
  --shapes 128:2048:0,128:4096:0,128:16384:0,64:1024:1 --peers cudnn > $R/breakdown.txt 2>&1
echo "breakdown rc $? ${SECONDS}s" | tee -a $L
cat $L
cut -c1-150 $R/breakdown.txt | head -60

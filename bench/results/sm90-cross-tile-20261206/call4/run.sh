#!/usr/bin/env bash
# 2026-12-06 session 08:31 call 4: HEAD 8c5a6e1 + fa2_cuda_check's new fixed-length case
# many-tiles-causal-sq>sk (C0, head dims 64 / 128 / 192 / 256): both paths, sanitizers.
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/bw.txz -C .dev/bw
C=.dev/bw/C0
for path in default sm80; do
  if [[ $path == sm80 ]]; then export FA2_CUDA_PATH=sm80; fi
  LD_LIBRARY_PATH=$C timeout 120 $C/fa2_cuda_check small many-tiles > $R/small-$path.txt 2>&1; echo "small many-tiles ($path) rc $?: $(tail -n 1 $R/small-$path.txt)"
done
unset FA2_CUDA_PATH
for tool in memcheck racecheck; do
  LD_LIBRARY_PATH=$C timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $C/fa2_cuda_check small many-tiles-causal > $R/$tool.txt 2>&1; echo "$tool rc $?"; grep -E "cases failed|SUMMARY" $R/$tool.txt
done
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$C timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $C/fa2_cuda_check small many-tiles-causal > $R/memcheck-sm80.txt 2>&1; echo "memcheck sm80 rc $?"; grep -E "cases failed|SUMMARY" $R/memcheck-sm80.txt
echo "done ${SECONDS}s"

#!/usr/bin/env bash
# 2026-12-06 session 08:31 call 7: fa2_cuda_check with its new case and line-buffered output
# (C1 = HEAD 8c5a6e1 + those, head dim 64): a run cut off by its time limit keeps the lines
# of the cases it finished; the new case on both paths.
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/bw.txz -C .dev/bw
C=.dev/bw/C1
LD_LIBRARY_PATH=$C timeout 15 $C/fa2_cuda_check small /d64 > $R/cut.txt 2>&1; echo "cut off rc $?: $(wc -l < $R/cut.txt) lines kept"; head -n 3 $R/cut.txt
LD_LIBRARY_PATH=$C timeout 60 $C/fa2_cuda_check small many-tiles-causal-sq > $R/new-hopper.txt 2>&1; echo "new case (Hopper path) rc $?: $(tail -n 1 $R/new-hopper.txt)"
FA2_CUDA_PATH=sm80 LD_LIBRARY_PATH=$C timeout 60 $C/fa2_cuda_check small many-tiles-causal-sq > $R/new-sm80.txt 2>&1; echo "new case (sm80 path) rc $?: $(tail -n 1 $R/new-sm80.txt)"
echo "done ${SECONDS}s"

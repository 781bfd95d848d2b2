#!/usr/bin/env bash
# 2026-12-06 session 08:31 call 5: the sm80 d64 backward at ptxas register-usage levels never
# measured (4, 6, 7, 10; HEAD compiles it at the default 5, level 8 measured -1..-2% on
# 2026-12-03). B = HEAD 8c5a6e1; BLn = HEAD with bwd_hd64:n (d64 builds). FA2_CUDA_PATH=sm80.
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
mkdir -p .dev/bw && tar xJf .dev/carry/bw.txz -C .dev/bw
export FA2_CUDA_PATH=sm80
D=.dev/bw
timeout 250 backends/cuda/tools/compare_builds.sh "2048,8192,16384" "64" $D/B $D/BL4 $D/BL6 $D/BL7 $D/BL10 2>&1 | tee $R/ab.txt
echo "done ${SECONDS}s"

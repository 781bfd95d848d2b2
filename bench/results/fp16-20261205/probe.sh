#!/usr/bin/env bash
# fp16 against bf16, ours and cuDNN's, on the Hopper path: sustained (clock,
# power, work a clock) and under ncu at the base clock (cycles, no power cap).
#   bash bench/results/fp16-20261205/probe.sh BUILD_DIR
set -u
build=${1:?build dir}
export FA2_LIBRARY=$build/libfa2.so PYTHONPATH=python:bench
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
for dtype in bf16 fp16 bf16 fp16; do
  echo "== sustained fwd $dtype"
  python3 bench/power_probe.py --dtype $dtype --modes fwd --seconds 2 \
    --shapes 128:2048:0,128:4096:0,64:2048:0 --impls fa2,cudnn 2>&1 | grep -v Warning
done
for dtype in bf16 fp16; do
  echo "== sustained bwd $dtype"
  python3 bench/power_probe.py --dtype $dtype --modes bwd --seconds 2 \
    --shapes 128:2048:0 --impls fa2,cudnn 2>&1 | grep -v Warning
done
echo "== ncu, base clock (locked), fwd"
for impl in fa2 cudnn; do
  case $impl in fa2) re=fwd_kernel ;; cudnn) re=fprop ;; esac
  for dtype in bf16 fp16; do
    for shape in "128 2048" "64 2048"; do
      ncu --clock-control base --kernel-name "regex:$re" --launch-skip 3 --launch-count 1 \
        --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active \
        --csv --page raw python3 bench/profile_peers.py call $impl $shape 0 fwd --dtype $dtype 2>/dev/null |
        python3 -c "
import csv,sys
rows=[r for r in csv.reader(sys.stdin) if r]
h=rows[0]; v=[r for r in rows[1:] if r[0].isdigit()]
keep=[i for i,n in enumerate(h) if any(k in n for k in ('duration','cycles_elapsed','inst_executed','pct'))]
for r in v: print('$impl $dtype d'+'$shape'.replace(' ',' s'), ' '.join(h[i].split('.')[0].split('__')[-1]+'='+r[i] for i in keep))
"
    done
  done
done
echo "done ${SECONDS}s"

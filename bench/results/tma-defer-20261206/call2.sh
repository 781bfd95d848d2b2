#!/usr/bin/env bash
# call 3: call2.sh (T1 against H7), then HEAD's standing: bf16 side by side and sustained probes.
set -u
R=$OUT
bash .dev/s1/call2.sh
echo "== call2 part done ${SECONDS}s"
L=.dev/H7/libfa2.so
mkdir -p $R/bf16
FA2_LIBRARY=$L PYTHONPATH=python timeout 130 python3 bench/sdpa_side_by_side.py --dtypes bf16 \
  --head-dims 64,128,256 --modes fwd,bwd --impls fa2,fa2_sm80,flash,cudnn,efficient \
  --warmup 10 --rep 40 --rounds 2 --out $R/bf16 --plot > $R/bf16/sxs-bf16.txt 2>&1
echo "sxs bf16 done ${SECONDS}s"
export FA2_LIBRARY=$L PYTHONPATH=python:bench
probe() { timeout 70 python3 bench/power_probe.py --seconds 2.5 "$@" 2>&1 | grep -v Warn; }
{
probe --modes fwd --impls fa2,cudnn --shapes 64:2048:0,64:2048:1,64:4096:0
probe --modes bwd --impls fa2,cudnn --shapes 128:4096:0,128:8192:0
probe --modes bwd --impls fa2_sm80,flash --shapes 64:8192:0,64:16384:0,256:8192:0
probe --modes fwd --impls fa2_sm80,flash --shapes 256:512:1,64:2048:0
} > $R/probe-standing.txt
echo "done ${SECONDS}s"
cat $R/probe-standing.txt

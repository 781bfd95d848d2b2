#!/usr/bin/env bash
# The L2 request coalescer's counters of the forward at 2k / 4k: H0 (HEAD 85e6f4d), KV (two K stages,
# three V stages, two Q buffers at d128) and cuDNN; ncu metrics only, natural clocks.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
m=lrc__average_xbar2gpc_sectors_op_read.ratio,lrc__lts2lrc_sectors_op_read.sum,lrc__xbar2gpc_sectors_op_read.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum
prof() {  # label build impl d seq causal regex
  FA2_LIBRARY=.dev/$2/libfa2.so timeout 200 ncu --clock-control none --kernel-name "regex:$7" \
    --launch-skip 3 --launch-count 1 --metrics $m --csv \
    python3 bench/profile_peers.py call $3 $4 $5 $6 fwd 2>/dev/null | grep -E '^"' | \
    awk -F'","' -v l="$1 d$4 s$5 c$6" 'NR>1 {gsub(/"/,"",$NF); printf "%-24s %-48s %s\n", l, $(NF-2), $NF}'
}
for s in 2048 4096; do
  prof H0 H0 fa2 128 $s 0 fwd_kernel
  prof KV KV fa2 128 $s 0 fwd_kernel
  prof cudnn H0 cudnn 128 $s 0 fprop
done
prof H0 H0 fa2 128 2048 1 fwd_kernel
prof cudnn H0 cudnn 128 2048 1 fprop
prof H0 H0 fa2 64 2048 0 fwd_kernel
prof cudnn H0 cudnn 64 2048 0 fprop
echo "done ${SECONDS}s"

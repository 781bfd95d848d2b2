#!/usr/bin/env bash
# The main kernel of fa2 (Hopper and sm80 paths) and of PyTorch SDPA's
# backends under `ncu --set full` at one paper-grid shape, and a table of
# what each executes (bench/profile_peers.py compare), in one device call:
#   backends/cuda/tools/profile_vs_peers.sh BUILD_DIR D SEQLEN CAUSAL MODE [IMPLS]
#   e.g. ... .dev/M2 128 2048 0 bwd fa2,fa2_sm80,flash,cudnn
# BUILD_DIR holds libfa2.so. Writes $OUT/profile.tgz (the ncu reports' raw
# CSVs, source pages (SASS with stall samples per line) and detail pages; the
# device tool returns few files, so one archive) and prints the table, then
# where each kernel's warps wait (bench/profile_peers.py lines) and what each executes by
# opcode (profile_peers.py mix).
set -uo pipefail
build=$(cd "${1:?usage: profile_vs_peers.sh BUILD_DIR D SEQLEN CAUSAL MODE [IMPLS]}" && pwd)
d=${2:?head dim}; seqlen=${3:?seqlen}; causal=${4:?causal 0 or 1}; mode=${5:?fwd or bwd}
impls=${6:-fa2,fa2_sm80,flash,cudnn}
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${OUT:-$PWD}
work=$out/profile
mkdir -p "$work"
export FA2_LIBRARY=$build/libfa2.so

# The main kernel of each implementation (the side kernels, D and the dQ
# conversion, are not matched).
kernel_regex() {
  case "$1:$mode" in
    fa2*:fwd) echo "fwd_kernel" ;;
    fa2*:bwd) echo "bwd_kernel|bwd_split_kernel" ;;
    flash:fwd) echo "flash_fwd_kernel" ;;
    flash:bwd) echo "flash_bwd_dq_dk_dv" ;;
    cudnn:fwd) echo "fprop" ;;
    cudnn:bwd) echo "bprop" ;;
    efficient:fwd) echo "fmha_cutlassF" ;;
    efficient:bwd) echo "fmha_cutlassB" ;;
  esac
}

csvs=()
for impl in ${impls//,/ }; do
  name=${impl}_${mode}_d${d}_s${seqlen}_c${causal}
  # Skip the warm-up passes of `profile_peers.py call` (WARMUPS there).
  timeout 300 ncu --clock-control none --kernel-name "regex:$(kernel_regex "$impl")" \
    --launch-skip 3 --launch-count 1 --set full --import-source no -o "$work/$name" \
    python3 "$root/bench/profile_peers.py" call "$impl" "$d" "$seqlen" "$causal" "$mode" \
    > "$work/$name.log" 2>&1
  rc=$?
  if [[ $rc != 0 || ! -f $work/$name.ncu-rep ]]; then
    echo "$impl: ncu rc=$rc, no report (log: $work/$name.log)"
    continue
  fi
  ncu --import "$work/$name.ncu-rep" --page raw --csv > "$work/$name.csv" 2>&1
  ncu --import "$work/$name.ncu-rep" --page details --print-details all > "$work/$name.txt" 2>&1
  ncu --import "$work/$name.ncu-rep" --page source --csv --print-source sass \
    > "$work/${name}_src.csv" 2>&1
  rm -f "$work/$name.ncu-rep"
  csvs+=("$work/$name.csv")
done
((${#csvs[@]} > 0)) && python3 "$root/bench/profile_peers.py" compare "${csvs[@]}" | tee "$work/table.txt"
for csv in "${csvs[@]}"; do
  python3 "$root/bench/profile_peers.py" lines "${csv%.csv}_src.csv" | tee -a "$work/lines.txt"
done
((${#csvs[@]} > 0)) &&
  python3 "$root/bench/profile_peers.py" mix "${csvs[@]/%.csv/_src.csv}" | tee "$work/mix.txt"
(cd "$out" && tar czf profile.tgz profile && rm -rf profile)

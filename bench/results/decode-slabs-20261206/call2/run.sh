#!/usr/bin/env bash
# 2026-12-06 session 05:38 call 2: timing only. B = HEAD e0f3a8e; N = two-slab decoding items
# (all head dims); N1 = N, but no split where the one-slab kernel's items would need none.
set -u
R=$(mktemp -d); trap 'tar czf $OUT/r.tgz -C $R .' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
export PYTHONPATH=python
grid() {  # build, head dim, queries, impls, tag
  [[ $SECONDS -gt 500 ]] && { echo "skip $5 (time)"; return; }
  FA2_LIBRARY=.dev/s8/$1/libfa2.so timeout 45 python3 bench/sdpa_side_by_side.py --decode --decode-head-dim $2 --decode-queries $3 --impls $4 --out $R/$5 > $R/grid-$5.log 2>&1
  grep -E "^ +[0-9]" $R/grid-$5.log | sort -u -k1,1n -k2,2n -k3,3 | sed "s/^/$5 /" >> $R/grid.txt
}
for round in 1 2; do
  for q in "128 8" "128 5" "64 8" "128 16"; do
    set -- $q
    if [[ $round == 1 ]]; then order="B N N1"; else order="N1 N B"; fi
    for b in $order; do grid $b $1 $2 fa2 q$2-d$1-$b-r$round; done
  done
  echo "round $round t=${SECONDS}s"
done
grid N1 128 8 fa2,cudnn,flash q8-d128-P-r0
grid N1 64 8 fa2,cudnn,flash q8-d64-P-r0
python3 - $R/grid.txt <<'PY'
import sys, collections
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    f = line.split()
    tag, b, kv, impl, us = f[0], f[1], f[2], f[3], float(f[4])
    q, d, build, _ = tag.split("-")
    name = build if impl == "fa2" else impl
    if build == "P" and impl == "fa2": name = "N1p"
    rows[(q, d, int(b), int(kv))][name].append(us)
for key in sorted(rows):
    r = {k: min(v) for k, v in rows[key].items()}
    cells = "  ".join("%s %s" % (k, "/".join("%.1f" % x for x in rows[key][k])) for k in sorted(r))
    extra = ""
    if "B" in r:
        extra = "  N/B %.2f N1/B %.2f" % (r.get("N", 0) / r["B"], r.get("N1", 0) / r["B"])
    print(*key, cells, extra)
PY
echo "done ${SECONDS}s"

#!/usr/bin/env python3
# Loops (backward branches) of each kernel in a cuobjdump -sass listing that hold HGMMA/HMMA:
# address range and opcode histogram, to compare main loops between builds.
import sys, re, collections
text = open(sys.argv[1]).read()
for fn in re.split(r'\n\s+Function : ', text)[1:]:
    name = fn.split('\n', 1)[0].strip()
    if len(sys.argv) > 2 and sys.argv[2] not in name: continue
    ins = []
    for m in re.finditer(r'/\*([0-9a-f]{4,})\*/\s+([^;]*);', fn):
        ins.append((int(m.group(1), 16), m.group(2).strip()))
    addr_idx = {a: i for i, (a, _) in enumerate(ins)}
    print('==', name[:110])
    for i, (a, t) in enumerate(ins):
        m = re.search(r'BRA(?:\.\w+)* (?:`?\(?\.L_x_\d+\)?|0x([0-9a-f]+))', t)
        if not m or not m.group(1): continue
        tgt = int(m.group(1), 16)
        if tgt >= a or tgt not in addr_idx: continue
        body = ins[addr_idx[tgt]:i + 1]
        ops = collections.Counter()
        for _, tt in body:
            w = tt.split()
            op = w[1] if w[0].startswith('@') else w[0]
            ops[op.split('.')[0]] += 1
        if ops['HGMMA'] + ops['HMMA'] == 0: continue
        print(f'  loop {tgt:#x}-{a:#x}: {len(body)} instrs', dict(sorted(ops.items(), key=lambda x: -x[1])[:14]))

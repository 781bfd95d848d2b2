#!/usr/bin/env python3
# Compares the largest HGMMA loop of a kernel in two cuobjdump listings: opcode-sequence similarity.
import sys, re, difflib
def loop(path, which):
    t = open(path).read()
    fns = re.split(r'\n\s+Function : ', t)[1:]
    fn = [f for f in fns if which in f.split('\n',1)[0]][0]
    ins = [(int(m.group(1),16), m.group(2).strip()) for m in re.finditer(r'/\*([0-9a-f]{4,})\*/\s+([^;]*);', fn)]
    idx = {a:i for i,(a,_) in enumerate(ins)}
    best = None
    for i,(a,s) in enumerate(ins):
        m = re.search(r'BRA(?:\.\w+)* 0x([0-9a-f]+)', s)
        if not m: continue
        tg = int(m.group(1),16)
        if tg >= a or tg not in idx: continue
        body = ins[idx[tg]:i+1]
        if not any('HGMMA' in x or 'HMMA' in x for _,x in body): continue
        if best is None or len(body) < len(best): best = body
    ops = []
    for _,s in best:
        w = s.split(); op = w[1] if w[0].startswith('@') else w[0]
        ops.append(op.split('.')[0])
    return ops
a = loop(sys.argv[1], sys.argv[3]); b = loop(sys.argv[2], sys.argv[3])
sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
print(f'{len(a)} vs {len(b)} instrs, similarity {sm.ratio():.3f}, identical={a==b}')

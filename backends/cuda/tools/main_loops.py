#!/usr/bin/env python3
"""Did a change move a kernel's main loop? Compares the innermost tensor-core
loops of each kernel in two builds, without a GPU:

  backends/cuda/tools/main_loops.py A B [NAME_PART]

A and B are `cuobjdump -sass` listings, or objects / libraries that cuobjdump
(on PATH) lists. A kernel's main loops are its innermost loops (a backward
branch's body holding no other loop) that issue HGMMA or HMMA. For each
kernel present in both builds and whose mangled name holds NAME_PART, each
pair of main loops (in address order) gets its length, the similarity of its
opcode order (difflib ratio) and whether it is the same code once registers,
predicates and addresses are set aside.

Why: the timings of the Hopper d64 forward and the sm80 d64 backward follow
the order ptxas gives their main loop, which edits outside the loop move
(backends/cuda/NOTES.md, 2026-11-30 on). Compare before timing an edit meant
for a loop's edges. (The picking of the loop matters: the smallest loop with
a tensor instruction can be the tile loop, rotated after the main one.)
"""
import difflib
import re
import subprocess
import sys


def listing(path):
    if path.endswith(".sass") or path.endswith(".txt"):
        return open(path).read()
    return subprocess.run(["cuobjdump", "-sass", path], check=True, capture_output=True,
                          text=True).stdout


def kernels(text):
    """Kernel name (file-local hashes dropped) -> [(address, instruction)]."""
    out = {}
    for fn in re.split(r"\n\s+Function : ", text)[1:]:
        name = fn.split("\n", 1)[0].strip()
        name = re.sub(r"_GLOBAL__N__\w+?_\d+", "", re.sub(r"_cu_[0-9a-f]+_\d+", "", name))
        out[name] = [(int(m.group(1), 16), m.group(2).strip())
                     for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", fn)]
    return out


def main_loops(code):
    index = {address: i for i, (address, _) in enumerate(code)}
    loops = []
    for i, (address, text) in enumerate(code):
        m = re.search(r"BRA(?:\.\w+)* (?:`?\(?\.L_x_\d+\)?|0x([0-9a-f]+))", text)
        if m and m.group(1) and int(m.group(1), 16) < address and int(m.group(1), 16) in index:
            loops.append((index[int(m.group(1), 16)], i))
    inner = [(b, e) for b, e in loops
             if not any((b, e) != (b2, e2) and b <= b2 and e2 <= e for b2, e2 in loops)]
    return [[t for _, t in code[b:e + 1]] for b, e in inner
            if any(re.search(r"\bH(G)?MMA\b", t) for _, t in code[b:e + 1])]


def opcode(text):
    words = text.split()
    return (words[1] if words[0].startswith("@") else words[0]).split(".")[0]


def normalised(text):
    text = re.sub(r"0x[0-9a-f]+", "X", text).replace(".reuse", "")
    return re.sub(r"\bU?R\d+|\bU?P\d\b", "r", text)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    a, b = (kernels(listing(p)) for p in sys.argv[1:3])
    part = sys.argv[3] if len(sys.argv) > 3 else ""
    moved = 0
    for name in sorted(set(a) & set(b)):
        if part not in name:
            continue
        loops_a, loops_b = main_loops(a[name]), main_loops(b[name])
        if not loops_a and not loops_b:
            continue
        print(name[:120])
        if len(loops_a) != len(loops_b):
            print(f"  main loops: {len(loops_a)} vs {len(loops_b)}")
            moved += 1
            continue
        for la, lb in zip(loops_a, loops_b):
            ratio = difflib.SequenceMatcher(None, [opcode(t) for t in la],
                                            [opcode(t) for t in lb], autojunk=False).ratio()
            same = [normalised(t) for t in la] == [normalised(t) for t in lb]
            moved += not same
            print(f"  {len(la)} vs {len(lb)} instructions, opcode order {ratio:.3f}, "
                  f"{'same code' if same else 'moved'}")
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main())

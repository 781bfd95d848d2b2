#!/usr/bin/env python3
"""The Hopper forward's static rounds as a model (2026-12-07): CTA c of G takes tile c of
each even round and G - 1 - c of each odd one (fwd_kernel.cuh's snake); under a causal mask
the query block from_last blocks from the end of a head weighs m_blocks - from_last key
blocks. Prints the largest CTA's work over the mean for tiles in groups of g heads, longest
rows first inside a group (G1.patch; g = 1 is HEAD's order, g = all heads longest rows first),
at 16k tokens, hidden 2048, 128-row query blocks, 132 CTAs (an H100 / H200)."""


def group_order(heads, m_blocks, g):
    weights = []
    for first in range(0, heads, g):
        size = min(g, heads - first)
        weights += [m_blocks - j for j in range(m_blocks) for _ in range(size)]
    return weights


def snake_imbalance(weights, ctas):
    total = [0] * ctas
    for r in range((len(weights) + ctas - 1) // ctas):
        for c in range(ctas):
            i = r * ctas + (c if r % 2 == 0 else ctas - 1 - c)
            if i < len(weights):
                total[c] += weights[i]
    return max(total) / (sum(total) / ctas)


if __name__ == "__main__":
    for d in (64, 128):
        for seq in (1024, 2048, 4096, 8192):
            m_blocks, heads = seq // 128, (16384 // seq) * (2048 // d)
            row = [f"g{g}:{snake_imbalance(group_order(heads, m_blocks, g), 132):.3f}"
                   for g in sorted({1, 16, 24, 32, 48, 64, heads}) if g <= heads]
            print(f"d{d} {seq:5d} heads {heads:3d}", " ".join(row))

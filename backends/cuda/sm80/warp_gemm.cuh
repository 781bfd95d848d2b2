// Warp-level GEMMs on mma.m16n8k16. A warp owns kSlabs slabs of 16 rows;
// each slab's accumulator is float[2][kN/4]: [0] is the thread's share of
// row `group`, [1] of row `group + 8` (Sm80MmaLayout), holding columns
// 8*t + 2*in_quad + {0,1} at [2t], [2t+1]. That per-row shape is what
// core::online_softmax_step takes, so the softmax needs no reshuffle.
//
// Operand sources, named by how the tile sits in shared memory:
//   gemm_nt:  A [m][k] and B [n][k]     (the forward's Q K^T)
//   gemm_rn:  A in registers (a previous accumulator packed to b16, pack_acc),
//             B [k][n] read transposed  (the forward's P V)
//   gemm_smem: A and B from shared memory, each K- or MN-major (SmemOperand):
//             the backward's GEMMs (gemm_smem_pair: two of them in one k loop)
#pragma once

#include "sm80/smem_tile.cuh"
#include "sm80/tile_ops.cuh"

namespace fa2::cuda {

template <int kN>
using SlabAcc = float[2][kN / 4];

template <class T, int kN>
__device__ inline void mma_into(float (&acc)[2][kN / 4], int n_tile, const uint32_t (&a)[4],
                                uint32_t b0, uint32_t b1) {
  float c[4] = {acc[0][2 * n_tile], acc[0][2 * n_tile + 1], acc[1][2 * n_tile],
                acc[1][2 * n_tile + 1]};
  Element<T>::mma(c, a, b0, b1);
  acc[0][2 * n_tile] = c[0], acc[0][2 * n_tile + 1] = c[1];
  acc[1][2 * n_tile] = c[2], acc[1][2 * n_tile + 1] = c[3];
}

template <int kSlabs, int kN>
__device__ inline void zero(float (&acc)[kSlabs][2][kN / 4]) {
#pragma unroll
  for (int s = 0; s < kSlabs; ++s)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int c = 0; c < kN / 4; ++c) acc[s][h][c] = 0.f;
}

// The default `between` of the GEMMs below: no work of the caller's.
struct NoWork {
  __device__ void operator()(int) const {}
};

// An operand in shared memory, its tile stored either K-major (rows are M
// or N, columns are K: [m][k], [n][k]) or MN-major ([k][m], [k][n], read
// with ldmatrix.trans). The backward reads one tile both ways (dS as
// [query][key] is dQ's A and, transposed, dK's), so the storage order is a
// template argument rather than a function name per combination. A lane
// reads an operand through its Walk (smem_tile.cuh); a GEMM leaves the
// walks it is given as it found them (Walk::reset), so that a caller can
// keep one across its main loop in one register.
template <class Tile, bool kKMajor, bool kIsA>
struct SmemOperand {
  using Walk = typename Tile::Walk;
  // The lane's walk from the 16x16 block at M/N offset mn0, k 0. ldmatrix.x4
  // returns its four 8x8 matrices in mma operand order: A's {m0-7 k0-7,
  // m8-15 k0-7, m0-7 k8-15, m8-15 k8-15}; B's {n0-7 k0-7, n0-7 k8-15,
  // n8-15 k0-7, n8-15 k8-15} (= b0, b1 of n-tile 0, then of n-tile 1).
  __device__ static Walk walk(uint32_t s, int mn0, int lane) {
    constexpr bool kRowsFirst = kIsA == kKMajor;  // lanes 0-15 walk the stored rows
    const int r = kRowsFirst ? lane % 16 : lane % 8 + (lane / 16) * 8;
    const int c = kRowsFirst ? (lane / 16) * 8 : ((lane / 8) % 2) * 8;
    return {kKMajor ? Tile::addr(s, mn0 + r, c) : Tile::addr(s, r, mn0 + c)};
  }
  // The 16x16 block (M/N block i, k block kk).
  __device__ static void load(uint32_t (&r)[4], Walk &walk, int i, int kk) {
    if constexpr (kKMajor)
      ldmatrix_x4(r, walk.at(16 * i, 16 * kk));
    else
      ldmatrix_x4_trans(r, walk.at(16 * kk, 16 * i));
  }
};

template <class Tile>
using RowsA = SmemOperand<Tile, true, true>;  // A stored [m][k]
template <class Tile>
using ColsA = SmemOperand<Tile, false, true>;  // A stored [k][m]
template <class Tile>
using RowsB = SmemOperand<Tile, true, false>;  // B stored [n][k]
template <class Tile>
using ColsB = SmemOperand<Tile, false, false>;  // B stored [k][n]

// acc[s] += A[16 s .. + 16, 0..kK) * B[0 .. kN, 0..kK)^T, A and B read
// through the lanes' walks of RowsA<ATile> and RowsB<BTile> (rows from the
// walks' M / N offsets). Unlike gemm_smem, each B fragment is used as soon
// as it arrives: the loop holds one. kUnrollK trades the overlap of the next
// step's loads against registers (1 where the caller's registers are
// tight). `between(kk)` runs after step kk's mma (the forward's V copies at
// d256).
template <class T, class ATile, class BTile, int kSlabs, int kN, int kK, int kUnrollK = 1,
          class Between = NoWork>
__device__ inline void gemm_nt(float (&acc)[kSlabs][2][kN / 4], typename ATile::Walk &a_walk,
                               typename BTile::Walk &b_walk, Between between = {}) {
  constexpr bool kRolled = kUnrollK < kK / 16;
#pragma unroll kUnrollK
  for (int kk = 0; kk < kK / 16; ++kk) {
    uint32_t a[kSlabs][4];
#pragma unroll
    for (int s = 0; s < kSlabs; ++s) RowsA<ATile>::load(a[s], a_walk, s, kk);
#pragma unroll
    for (int np = 0; np < kN / 16; ++np) {
      uint32_t b[4];
      RowsB<BTile>::load(b, b_walk, np, kk);
#pragma unroll
      for (int s = 0; s < kSlabs; ++s) {
        mma_into<T, kN>(acc[s], 2 * np, a[s], b[0], b[1]);
        mma_into<T, kN>(acc[s], 2 * np + 1, a[s], b[2], b[3]);
      }
    }
    between(kk);
    if constexpr (kRolled) a_walk.reset(), b_walk.reset();  // each pass starts unflipped
  }
  a_walk.reset();
  b_walk.reset();
}

// An accumulator as the A operand of the next GEMM, packed to b16 as soon
// as it is final so that its fp32 registers die early. Fragment kk holds
// k-columns [16 kk, 16 kk + 16): the C layout of two neighbouring n-tiles
// is exactly the A layout of m16k16, so probabilities never leave
// registers between the two GEMMs. Element-wise the same rounding as
// packing at the point of use.
template <int kSlabs, int kK>
using PackedA = uint32_t[kSlabs][kK / 16][4];

template <class T, int kSlabs, int kK>
__device__ inline void pack_acc(uint32_t (&a)[kSlabs][kK / 16][4],
                                const float (&acc)[kSlabs][2][kK / 4]) {
#pragma unroll
  for (int s = 0; s < kSlabs; ++s)
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk) {
      a[s][kk][0] = Element<T>::pack(acc[s][0][4 * kk], acc[s][0][4 * kk + 1]);
      a[s][kk][1] = Element<T>::pack(acc[s][1][4 * kk], acc[s][1][4 * kk + 1]);
      a[s][kk][2] = Element<T>::pack(acc[s][0][4 * kk + 2], acc[s][0][4 * kk + 3]);
      a[s][kk][3] = Element<T>::pack(acc[s][1][4 * kk + 2], acc[s][1][4 * kk + 3]);
    }
}

// acc[s] += A_s (packed registers, kK columns) * B[0..kK, 0..kN), B read
// through the lanes' walk of ColsB<BTile>. The column pairs go in classes
// of one flip (BTile::kFlipBlocks), all k steps of a class before the
// next: with XorTile that is one XOR a class, not one a column pair (the
// sm80 d256 forward: 4 against 64 a key block; ncu 2026-12-03 had the
// walks' XORs at 11% of its stall samples, each waiting for the ldmatrix
// before it to read the register). Each accumulator still sums its k steps
// in order. H200 through FA2_CUDA_PATH=sm80, 2026-12-03 ~19:25, with
// TileCopies for V: d256 +1.6..2.2% at 512-8k; d128 (this alone) +0.8..2.6%
// from 2k, -1.1% at 512 without a mask. Four registers a flip for Q K^T's
// walks instead (no XOR at all) cost d256 that gain back.
template <class T, class BTile, int kSlabs, int kN, int kK>
__device__ inline void gemm_rn(float (&acc)[kSlabs][2][kN / 4],
                               const uint32_t (&a)[kSlabs][kK / 16][4],
                               typename BTile::Walk &b_walk) {
  constexpr int kClasses = BTile::kFlipBlocks;  // XorTile: kN, its columns, is a multiple of 64
#pragma unroll
  for (int cls = 0; cls < kClasses; ++cls)
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk)
#pragma unroll
      for (int np = cls; np < kN / 16; np += kClasses) {
        uint32_t b[4];
        ColsB<BTile>::load(b, b_walk, np, kk);
#pragma unroll
        for (int s = 0; s < kSlabs; ++s) {
          mma_into<T, kN>(acc[s], 2 * np, a[s][kk], b[0], b[1]);
          mma_into<T, kN>(acc[s], 2 * np + 1, a[s][kk], b[2], b[3]);
        }
      }
  b_walk.reset();
}

// One k step (16 deep) of a warp tile: the A fragments of its kSlabs
// slabs and the B fragments of its kN / 16 column pairs, from shared
// memory (A, B: SmemOperand types). Every B fragment feeds kSlabs mma
// pairs and every A fragment kN / 8 mma: warp tiles of two or more slabs
// are what keep the ldmatrix traffic per mma low.
template <class A, class B, int kSlabs, int kN>
struct SmemStep {
  uint32_t a[kSlabs][4];
  uint32_t b[kN / 16][4];
  __device__ void load(typename A::Walk &a_walk, typename B::Walk &b_walk, int kk) {
#pragma unroll
    for (int s = 0; s < kSlabs; ++s) A::load(a[s], a_walk, s, kk);
#pragma unroll
    for (int np = 0; np < kN / 16; ++np) B::load(b[np], b_walk, np, kk);
  }
  template <class T>
  __device__ void mma(float (&acc)[kSlabs][2][kN / 4]) const {
#pragma unroll
    for (int np = 0; np < kN / 16; ++np)
#pragma unroll
      for (int s = 0; s < kSlabs; ++s) {
        mma_into<T, kN>(acc[s], 2 * np, a[s], b[np][0], b[np][1]);
        mma_into<T, kN>(acc[s], 2 * np + 1, a[s], b[np][2], b[np][3]);
      }
  }
};

// acc[s] += A[a_mn0 + 16 s .. + 16, 0..kK) * B[0..kK, b_mn0 .. + kN) with
// A, B SmemOperand types. The k loop is software-pipelined: the fragments
// of step kk + 1 are requested before the mma of step kk issue, so a warp
// never waits out a whole ldmatrix latency between two steps (with two
// warps per scheduler nothing else hides it). Costs one more step of
// fragment registers; the loop is unrolled fully (kK / 16 steps).
// `between(kk)` runs after step kk's mma: work of the caller's that the
// tensor cores do not wait for (the backward's dQ atomics), spread among them.
template <class T, class A, class B, int kSlabs, int kN, int kK, class Between = NoWork>
__device__ inline void gemm_smem(float (&acc)[kSlabs][2][kN / 4], uint32_t sA, int a_mn0,
                                 uint32_t sB, int b_mn0, int lane, Between between = {}) {
  typename A::Walk a_walk = A::walk(sA, a_mn0, lane);
  typename B::Walk b_walk = B::walk(sB, b_mn0, lane);
  SmemStep<A, B, kSlabs, kN> step[2];
  step[0].load(a_walk, b_walk, 0);
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk) {
    if (kk + 1 < kK / 16) step[(kk + 1) % 2].load(a_walk, b_walk, kk + 1);
    step[kk % 2].template mma<T>(acc);
    between(kk);
  }
}

// One GEMM of a warp for gemm_smem_pair: acc[s] += A[a_mn0 + 16 s .. + 16,
// 0..kK) * B[0..kK, b_mn0 .. + kN) (A, B: SmemOperand types).
template <class A, class B, int kSlabs_, int kN_, int kK>
struct SmemGemm {
  static constexpr int kSlabs = kSlabs_, kN = kN_, kSteps = kK / 16;
  using Step = SmemStep<A, B, kSlabs, kN>;
  float (&acc)[kSlabs][2][kN / 4];
  typename A::Walk a_walk;
  typename B::Walk b_walk;
  __device__ SmemGemm(float (&acc_)[kSlabs][2][kN / 4], uint32_t sA, int a_mn0, uint32_t sB,
                      int b_mn0, int lane)
      : acc(acc_), a_walk(A::walk(sA, a_mn0, lane)), b_walk(B::walk(sB, b_mn0, lane)) {}
};

// Two independent GEMMs of the same depth (the backward's S = Q K^T and
// dP = dO V^T) in one k loop, their steps alternating: step kk of the
// second loads while step kk of the first multiplies, and step kk + 1 of
// the first while the second multiplies. Every mma group finds its
// fragments requested one group earlier, as in gemm_smem, but each GEMM
// holds one step of fragments, not two (the registers the backward's S / dP
// phase does not have), and the two accumulators' mma chains interleave.
// Unrolled fully.
template <class T, class G0, class G1>
__device__ inline void gemm_smem_pair(G0 g0, G1 g1) {
  static_assert(G0::kSteps == G1::kSteps, "gemm_smem_pair: GEMMs of one depth");
  typename G0::Step step0;
  typename G1::Step step1;
  step0.load(g0.a_walk, g0.b_walk, 0);
#pragma unroll
  for (int kk = 0; kk < G0::kSteps; ++kk) {
    step1.load(g1.a_walk, g1.b_walk, kk);
    step0.template mma<T>(g0.acc);
    if (kk + 1 < G0::kSteps) step0.load(g0.a_walk, g0.b_walk, kk + 1);
    step1.template mma<T>(g1.acc);
  }
}

}  // namespace fa2::cuda

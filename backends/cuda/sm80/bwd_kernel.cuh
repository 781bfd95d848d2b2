// FlashAttention-2 backward on sm80 Tensor Cores.
//
// One CTA per (batch, kv head, key block) (core::bwd_item). K and V of the
// block stay in shared memory; the CTA walks every query head of the GQA
// group and every query block that sees its keys (core::query_blocks),
// with Q / dO double-buffered by cp.async. Per query block each warp, for
// its slab of 16 keys, computes
//   S^T = K Q^T,  P^T = exp2(S^T c - lse),  dP^T = V dO^T,
//   dS^T = P^T (dP^T - D)        (D = rowsum(dO * O), precomputed)
//   dV += P^T dO,  dK += dS^T Q  (both in registers, A operands re-packed
//                                  from the accumulators)
// then dS^T goes through shared memory so all warps compute dQ = dS K for
// the block and add it to an fp32 accumulator with atomics.
#pragma once

#include <cstdint>

#include "core/online_softmax.h"
#include "core/work.h"
#include "sm80/bwd_scratch.h"
#include "sm80/smem_tile.cuh"
#include "sm80/warp_gemm.cuh"

namespace fa2::cuda {

template <class T, int kHeadDim, int kBlockM, int kBlockN, int kDSplit, int kStages>
struct BwdKernel {
  static constexpr int kWarps = kBlockN / 16 * kDSplit;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kDCols = kHeadDim / kDSplit;       // dK/dV columns per warp
  static constexpr int kDqRowSlabs = kBlockM / 16;
  static constexpr int kDqCols = kHeadDim / (kWarps / kDqRowSlabs);  // dQ columns per warp
  // A warp holding whole 128-column rows of dK and dV next to 64-query
  // blocks is at the 255-register limit: there dP^T and dQ are computed in
  // 32-column parts (fewer fp32 registers live at once, for a few extra
  // ldmatrix). Elsewhere the parts would only add loads (d64: -3%).
  static constexpr bool kInParts = kDCols >= 128 && kBlockM >= 64;
  static constexpr int kDpPartCols = kInParts ? 32 : kBlockM;  // dP^T queries at a time
  static constexpr int kDqPartCols = kInParts ? 32 : kDqCols;  // dQ columns at a time
  static_assert(kDCols % 16 == 0 && kDqCols % 16 == 0 && kWarps % kDqRowSlabs == 0 &&
                    kBlockM % kDpPartCols == 0 && kDqCols % kDqPartCols == 0,
                "bad backward tile plan");
  using KVTile = SmemTile<kBlockN, kHeadDim>;
  using QTile = SmemTile<kBlockM, kHeadDim>;
  using DsTile = SmemTile<kBlockN, kBlockM>;  // dS^T: [key][query]
  static constexpr int kSmemBytes = 2 * KVTile::kBytes + 2 * kStages * QTile::kBytes +
                                    DsTile::kBytes + int(sizeof(float)) * 2 * kStages * kBlockM;
};

template <class T, int kHeadDim, int kBlockM, int kBlockN, int kDSplit, int kStages>
__global__ void __launch_bounds__(kBlockN / 16 * kDSplit * 32)
    bwd_kernel(const core::AttnParams p, const BwdScratch scratch) {
  using K = BwdKernel<T, kHeadDim, kBlockM, kBlockN, kDSplit, kStages>;
  using KVTile = typename K::KVTile;
  using QTile = typename K::QTile;
  using DsTile = typename K::DsTile;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const uint32_t sK = smem_address(smem_raw);
  const uint32_t sV = sK + KVTile::kBytes;
  const uint32_t sQ = sV + KVTile::kBytes;             // kStages tiles
  const uint32_t sdO = sQ + kStages * QTile::kBytes;   // kStages tiles
  const uint32_t sdS = sdO + kStages * QTile::kBytes;
  const int stats_offset = 2 * KVTile::kBytes + 2 * kStages * QTile::kBytes + DsTile::kBytes;
  float *sLse = reinterpret_cast<float *>(smem_raw + stats_offset);  // kStages x kBlockM, log2 units
  float *sDelta = sLse + kStages * kBlockM;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const core::BwdItem item = core::bwd_item(p, kBlockN, blockIdx.x);
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  const int key0 = item.n_block * kBlockN;
  if (key0 >= seq.seqlen_k) return;
  const core::Mask mask = core::mask_of(p, seq);
  const core::BlockRange blocks = core::query_blocks(mask, item.n_block, kBlockN, kBlockM);
  const int num_m = blocks.empty() ? 0 : blocks.end - blocks.begin;
  const int num_iters = num_m * p.group_size;

  const T *k = static_cast<const T *>(p.k.data) +
               core::row_offset(p.k, item.batch, seq.k_row0, key0, item.head_kv);
  const T *v = static_cast<const T *>(p.v.data) +
               core::row_offset(p.v, item.batch, seq.k_row0, key0, item.head_kv);
  load_tile_async<KVTile, K::kThreads>(sK, k, p.k.stride_seq, seq.seqlen_k - key0, p.head_dim, tid);
  load_tile_async<KVTile, K::kThreads>(sV, v, p.v.stride_seq, seq.seqlen_k - key0, p.head_dim, tid);
  cp_async_commit();

  // Iteration i: query head group_first + i / num_m, query block
  // blocks.begin + i % num_m.
  auto load_q = [&](int i) {
    if (i < num_iters) {
      const int head_q = item.head_kv * p.group_size + i / num_m;
      const int m_block = blocks.begin + i % num_m;
      const int row0 = m_block * kBlockM;
      const int stage = i % kStages;
      const T *q = static_cast<const T *>(p.q.data) +
                   core::row_offset(p.q, item.batch, seq.q_row0, row0, head_q);
      const T *dout = static_cast<const T *>(p.dout.data) +
                      core::row_offset(p.dout, item.batch, seq.q_row0, row0, head_q);
      load_tile_async<QTile, K::kThreads>(sQ + stage * QTile::kBytes, q, p.q.stride_seq,
                                          seq.seqlen_q - row0, p.head_dim, tid);
      load_tile_async<QTile, K::kThreads>(sdO + stage * QTile::kBytes, dout, p.dout.stride_seq,
                                          seq.seqlen_q - row0, p.head_dim, tid);
      for (int r = tid; r < kBlockM; r += K::kThreads) {
        // Rows past the sequence get lse +inf: their p is exactly 0.
        float lse = INFINITY, delta = 0.f;
        if (row0 + r < seq.seqlen_q) {
          const int64_t index = core::row_stat_index(p, item.batch, head_q, row0 + r);
          lse = core::lse_log2(p.lse[index]);
          delta = scratch.delta[index];
        }
        sLse[stage * kBlockM + r] = lse;
        sDelta[stage * kBlockM + r] = delta;
      }
    }
    cp_async_commit();
  };
  if constexpr (kStages > 1) {
#pragma unroll
    for (int i = 0; i < kStages - 1; ++i) load_q(i);
  }

  const int key_slab = warp % (kBlockN / 16);
  const int d0 = (warp / (kBlockN / 16)) * K::kDCols;  // this warp's dK/dV columns
  const int dq_slab = warp % K::kDqRowSlabs;
  const int dq_col0 = (warp / K::kDqRowSlabs) * K::kDqCols;
  const int group = Sm80MmaLayout::group(lane), in_quad = Sm80MmaLayout::in_quad(lane);
  float dk[1][2][K::kDCols / 4], dv[1][2][K::kDCols / 4];
  zero<1, K::kDCols>(dk);
  zero<1, K::kDCols>(dv);

  for (int i = 0; i < num_iters; ++i) {
    if constexpr (kStages == 1) {
      __syncthreads();  // the previous iteration is done with the only stage
      load_q(i);
      cp_async_wait<0>();
    } else {
      cp_async_wait<kStages - 2>();
    }
    __syncthreads();
    if constexpr (kStages > 1) load_q(i + kStages - 1);
    const int stage = i % kStages;
    const uint32_t sQ_i = sQ + stage * QTile::kBytes;
    const uint32_t sdO_i = sdO + stage * QTile::kBytes;
    const float *lse_i = sLse + stage * kBlockM;
    const float *delta_i = sDelta + stage * kBlockM;
    const int head_q = item.head_kv * p.group_size + i / num_m;
    const int m_block = blocks.begin + i % num_m;

    float pt[1][2][kBlockM / 4];
    zero<1, kBlockM>(pt);
    gemm_nt<T, KVTile, QTile, 1, kBlockM, kHeadDim>(pt, sK, 16 * key_slab, sQ_i, 0, lane);
    const bool needs_mask = core::tile_needs_mask(mask, m_block, item.n_block, kBlockM, kBlockN);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int key = key0 + 16 * key_slab + 8 * h + group;
#pragma unroll
      for (int c = 0; c < kBlockM / 4; ++c) {
        const int query = 8 * (c / 2) + 2 * in_quad + c % 2;  // within the block
        const float prob = core::prob_from_lse(pt[0][h][c], p.scale_log2, lse_i[query]);
        pt[0][h][c] = needs_mask && !mask.visible(m_block * kBlockM + query, key) ? 0.f : prob;
      }
    }
    // dP^T = V dO^T in parts of K::kDpPartCols queries, each turned into
    // dS^T (unscaled) and packed to b16 at once, so that only one part is
    // live in fp32 next to P^T and dK / dV (this kernel's register peak).
    PackedA<1, kBlockM> dst_frag;
#pragma unroll
    for (int part = 0; part < kBlockM / K::kDpPartCols; ++part) {
      float dpt[1][2][K::kDpPartCols / 4];
      zero<1, K::kDpPartCols>(dpt);
      gemm_nt<T, KVTile, QTile, 1, K::kDpPartCols, kHeadDim>(dpt, sV, 16 * key_slab, sdO_i,
                                                             part * K::kDpPartCols, lane);
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int c = 0; c < K::kDpPartCols / 4; ++c) {
          const int col = part * K::kDpPartCols / 4 + c;  // in pt
          const int query = 8 * (col / 2) + 2 * in_quad + col % 2;
          dpt[0][h][c] = pt[0][h][col] * (dpt[0][h][c] - delta_i[query]);
        }
      PackedA<1, K::kDpPartCols> dst_part;
      pack_acc<T, 1, K::kDpPartCols>(dst_part, dpt);
#pragma unroll
      for (int kk = 0; kk < K::kDpPartCols / 16; ++kk)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          dst_frag[0][part * K::kDpPartCols / 16 + kk][r] = dst_part[0][kk][r];
    }
    // P^T packed to b16 as the A operand of dV; its fp32 values die here.
    PackedA<1, kBlockM> pt_frag;
    pack_acc<T, 1, kBlockM>(pt_frag, pt);
    gemm_rn<T, QTile, 1, K::kDCols, kBlockM>(dv, pt_frag, sdO_i, d0, lane);
    gemm_rn<T, QTile, 1, K::kDCols, kBlockM>(dk, dst_frag, sQ_i, d0, lane);

    if (d0 == 0) {  // one warp per key slab publishes dS^T
      // Fragment register r of k-step kk: row group + 8 (r % 2), columns
      // 16 kk + 8 (r / 2) + 2 in_quad (pack_acc's layout).
      const uint32_t ds_lane = DsTile::addr(sdS, 16 * key_slab + group, 2 * in_quad);
#pragma unroll
      for (int kk = 0; kk < kBlockM / 16; ++kk)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          st_shared_b32(ds_lane + 2 * DsTile::offset(8 * (r % 2), 16 * kk + 8 * (r / 2)),
                        dst_frag[0][kk][r]);
    }
    __syncthreads();

    // dQ in parts of K::kDqPartCols columns (see kInParts).
#pragma unroll 1
    for (int part_col0 = dq_col0; part_col0 < dq_col0 + K::kDqCols; part_col0 += K::kDqPartCols) {
      float dq[2][K::kDqPartCols / 4];
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int c = 0; c < K::kDqPartCols / 4; ++c) dq[h][c] = 0.f;
      gemm_tt<T, DsTile, KVTile, K::kDqPartCols, kBlockN>(dq, sdS, 16 * dq_slab, sK, part_col0,
                                                          lane);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m_block * kBlockM + 16 * dq_slab + 8 * h + group;
        if (row >= seq.seqlen_q) continue;
        float *dq_row = scratch.dq_accum +
                        core::row_stat_index(p, item.batch, head_q, row) * p.head_dim;
#pragma unroll
        for (int t = 0; t < K::kDqPartCols / 8; ++t) {
          const int col = part_col0 + 8 * t + 2 * in_quad;  // even: 8-byte aligned
          if (col >= p.head_dim) continue;
#if __CUDA_ARCH__ >= 900
          atomicAdd(reinterpret_cast<float2 *>(dq_row + col),
                    make_float2(dq[h][2 * t], dq[h][2 * t + 1]));
#else
          atomicAdd(dq_row + col, dq[h][2 * t]);
          atomicAdd(dq_row + col + 1, dq[h][2 * t + 1]);
#endif
        }
      }
    }
  }
  cp_async_wait<0>();

  // Epilogue: dK gets the softmax scale (dS was unscaled), then both go out.
  T *dk_out = static_cast<T *>(p.dk.data) +
              core::row_offset(p.dk, item.batch, seq.k_row0, key0, item.head_kv);
  T *dv_out = static_cast<T *>(p.dv.data) +
              core::row_offset(p.dv, item.batch, seq.k_row0, key0, item.head_kv);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int key = 16 * key_slab + 8 * h + group;
    if (key >= seq.seqlen_k - key0) continue;
#pragma unroll
    for (int t = 0; t < K::kDCols / 8; ++t) {
      const int col = d0 + 8 * t + 2 * in_quad;
      if (col >= p.head_dim) continue;
      *reinterpret_cast<uint32_t *>(dk_out + key * p.dk.stride_seq + col) =
          Element<T>::pack(dk[0][h][2 * t] * p.scale, dk[0][h][2 * t + 1] * p.scale);
      *reinterpret_cast<uint32_t *>(dv_out + key * p.dv.stride_seq + col) =
          Element<T>::pack(dv[0][h][2 * t], dv[0][h][2 * t + 1]);
    }
  }
}

// D_i = rowsum(dO_i * O_i) for every row, one warp per row; also the rows
// a varlen sequence does not have (their D is never read).
template <class T>
__global__ void bwd_delta_kernel(const core::AttnParams p, float *delta) {
  const int64_t rows = int64_t(p.batch) * p.heads_q * p.seqlen_q;
  const int64_t r = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const int row = int(r % p.seqlen_q);
  const int head = int((r / p.seqlen_q) % p.heads_q);
  const int b = int(r / (int64_t(p.seqlen_q) * p.heads_q));
  const core::SeqInfo seq = core::seq_info(p, b);
  float sum = 0.f;
  if (row < seq.seqlen_q) {
    const T *dout = static_cast<const T *>(p.dout.data) + core::row_offset(p.dout, b, seq.q_row0, row, head);
    const T *out = static_cast<const T *>(p.out.data) + core::row_offset(p.out, b, seq.q_row0, row, head);
    for (int col = 8 * lane; col < p.head_dim; col += 8 * 32) {
      const uint4 a = *reinterpret_cast<const uint4 *>(dout + col);
      const uint4 o = *reinterpret_cast<const uint4 *>(out + col);
      const T *ae = reinterpret_cast<const T *>(&a);
      const T *oe = reinterpret_cast<const T *>(&o);
#pragma unroll
      for (int e = 0; e < 8; ++e) sum += Element<T>::to_float(ae[e]) * Element<T>::to_float(oe[e]);
    }
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) delta[r] = sum;
}

// dQ = scale * accumulator, converted to the element type, one warp per row.
template <class T>
__global__ void bwd_dq_convert_kernel(const core::AttnParams p, const float *dq_accum) {
  const int64_t rows = int64_t(p.batch) * p.heads_q * p.seqlen_q;
  const int64_t r = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const int row = int(r % p.seqlen_q);
  const int head = int((r / p.seqlen_q) % p.heads_q);
  const int b = int(r / (int64_t(p.seqlen_q) * p.heads_q));
  const core::SeqInfo seq = core::seq_info(p, b);
  if (row >= seq.seqlen_q) return;
  T *dq = static_cast<T *>(p.dq.data) + core::row_offset(p.dq, b, seq.q_row0, row, head);
  const float *acc = dq_accum + r * p.head_dim;
  for (int col = 2 * lane; col < p.head_dim; col += 2 * 32) {
    const float2 x = *reinterpret_cast<const float2 *>(acc + col);
    *reinterpret_cast<uint32_t *>(dq + col) = Element<T>::pack(x.x * p.scale, x.y * p.scale);
  }
}

}  // namespace fa2::cuda

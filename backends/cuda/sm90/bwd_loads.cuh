// What both Hopper backward kernels share around their GEMMs
// (bwd_kernel.cuh: each consumer warpgroup owns its keys;
// bwd_split_kernel.cuh: the warpgroups share the keys and split columns).
#pragma once

#include <cstdint>

#include "core/mask.h"
#include "core/params.h"
#include "core/work.h"
#include "dependent_launch.cuh"
#include "sm80/bwd_scratch.h"
#include "sm80/smem_tile.cuh"
#include "sm90/hopper_ops.cuh"

namespace fa2::cuda::sm90 {

// The loads of one CTA: K and V of its key block once (on bar_kv), then Q
// and dO of every iteration through a kStages ring, each stage a pair of
// mbarriers (full: the TMA's bytes have landed; empty: every consumer
// thread is done with the stage). With kDoStages < kStages, dO has a ring
// (and barriers, released per warp) of its own, so that its stage can be
// released before Q's.
// Tiles are 128-byte-swizzled column chunks. The query block's lse and D
// (BwdScratch::block_stats: contiguous, padded, so one bulk copy) come with
// its Q, into the stage's stats buffer: the consumers neither fetch them
// nor need a barrier of their own before reading them.
template <class T, int kHeadDim, int kBlockM, int kBlockN, int kStages, int kConsumers,
          int kDoStages = kStages>
struct BwdLoads {
  static constexpr int kChunks = kHeadDim / 64;
  static constexpr bool kDoApart = kDoStages != kStages;
  static constexpr uint32_t kKVBytes = kBlockN * kHeadDim * sizeof(T);
  static constexpr uint32_t kQBytes = kBlockM * kHeadDim * sizeof(T);  // Q or dO tile
  static constexpr uint32_t kStatsBytes = 2 * kBlockM * sizeof(float);  // lse and D
  static constexpr uint32_t kBarrierBytes = 8 * (1 + 2 * kStages + (kDoApart ? 2 * kDoStages : 0));
  uint32_t sK, sV, sQ, sdO, sStats, bar_kv;

  __device__ uint32_t full(int stage) const { return bar_kv + 8u * (1 + stage); }
  __device__ uint32_t empty(int stage) const { return bar_kv + 8u * (1 + kStages + stage); }
  __device__ uint32_t do_full(int stage) const { return bar_kv + 8u * (1 + 2 * kStages + stage); }
  __device__ uint32_t do_empty(int stage) const {
    return bar_kv + 8u * (1 + 2 * kStages + kDoStages + stage);
  }

  // One thread, before the CTA's first barrier.
  __device__ void init() const {
    mbar_init(bar_kv, 1);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full(s), 1);                 // the TMA thread
      // Every consumer thread arrives: the stats are read by ordinary loads,
      // and an arrive releases only its own thread's reads.
      mbar_init(empty(s), 128 * kConsumers);
    }
    for (int s = 0; kDoApart && s < kDoStages; ++s) {
      mbar_init(do_full(s), 1);
      mbar_init(do_empty(s), 4 * kConsumers);
    }
    mbar_init_fence();
  }

  // The producer's one thread; iteration `it` loads query block
  // m_block_of(it) of query head head_of(it) (its stats from block_stats).
  // kPerSequence: the call is varlen, its Q, K, V and dO come through the
  // batch entry's own maps (tma_load_operand). extra_kv(bar_kv) may add
  // extra_kv_bytes of loads of its own to the K / V barrier.
  template <bool kPerSequence, class MBlockOf, class HeadOf, class ExtraKv>
  __device__ void produce(const core::AttnParams &p, const TmaMaps &maps,
                          const float *block_stats, const core::BwdItem &item, int key0,
                          int num_iters, MBlockOf m_block_of, HeadOf head_of,
                          uint32_t extra_kv_bytes, ExtraKv extra_kv) const {
    if constexpr (kPerSequence) acquire_sequence_maps(maps, item.batch, kSeqOperands);
    mbar_arrive_expect_tx(bar_kv, 2 * kKVBytes + extra_kv_bytes);
    for (int c = 0; c < kChunks; ++c) {
      const uint32_t chunk = c * kBlockN * kSwizzleRowBytes;
      tma_load_operand<kSeqK, kPerSequence>(maps, item.batch, sK + chunk, bar_kv, 64 * c, key0,
                                            item.head_kv);
      tma_load_operand<kSeqV, kPerSequence>(maps, item.batch, sV + chunk, bar_kv, 64 * c, key0,
                                            item.head_kv);
    }
    extra_kv(bar_kv);
    for (int it = 0; it < num_iters; ++it) {
      const int stage = it % kStages, row0 = m_block_of(it) * kBlockM, head = head_of(it);
      mbar_wait(empty(stage), ((it / kStages) & 1) ^ 1);
      mbar_arrive_expect_tx(full(stage), (kDoApart ? 1 : 2) * kQBytes + kStatsBytes);
      bulk_load(sStats + stage * kStatsBytes,
                block_stats + block_stat_index(p, item.batch, head, row0), kStatsBytes,
                full(stage));
      for (int c = 0; c < kChunks; ++c) {
        const uint32_t chunk = c * kBlockM * kSwizzleRowBytes;
        tma_load_operand<kSeqQ, kPerSequence>(maps, item.batch, sQ + stage * kQBytes + chunk,
                                              full(stage), 64 * c, row0, head);
        if (!kDoApart)
          tma_load_operand<kSeqDout, kPerSequence>(maps, item.batch, sdO + stage * kQBytes + chunk,
                                                   full(stage), 64 * c, row0, head);
      }
      if (kDoApart) {
        const int do_stage = it % kDoStages;
        mbar_wait(do_empty(do_stage), ((it / kDoStages) & 1) ^ 1);
        mbar_arrive_expect_tx(do_full(do_stage), kQBytes);
        for (int c = 0; c < kChunks; ++c)
          tma_load_operand<kSeqDout, kPerSequence>(
              maps, item.batch, sdO + do_stage * kQBytes + c * kBlockM * kSwizzleRowBytes,
              do_full(do_stage), 64 * c, row0, head);
      }
    }
  }
  template <bool kPerSequence, class MBlockOf, class HeadOf>
  __device__ void produce(const core::AttnParams &p, const TmaMaps &maps,
                          const float *block_stats, const core::BwdItem &item, int key0,
                          int num_iters, MBlockOf m_block_of, HeadOf head_of) const {
    produce<kPerSequence>(p, maps, block_stats, item, key0, num_iters, m_block_of, head_of, 0,
                          [](uint32_t) {});
  }
};

// Launched as the programmatic dependent of the kernels before it (the
// delta kernel, a varlen call's maps kernel), both Hopper backward kernels
// wait for those at their start (dependent_launch.cuh): what is hidden is
// the launch. They let the dQ conversion launch at once: its CTAs take SMs
// only as this grid's last CTAs leave them, and wait for their kv head's
// count in kv_done where the kernel keeps one, else for this grid's end.
__device__ inline void start_after_delta() {
  grid_dependency_wait();
  grid_launch_dependents();
}

// A CTA's keys counted in kv_done (bwd_scratch.h), by one thread, once
// every dQ add of the CTA is complete and visible at the GPU's scope. Only
// kernels of sm90_bwd_counts_keys call it: the host hands those, and only
// those, a kv_done (hopper_bwd_counts_keys).
__device__ inline void count_keys_done(const core::AttnParams &p, const BwdScratch &scratch,
                                       const core::BwdItem &item, int keys_valid) {
  if (keys_valid > 0)
    add_release_gpu(scratch.kv_done + kv_done_index(p, item.batch, item.head_kv),
                    unsigned(keys_valid));
}

// dK = dV = 0 for a key block that no query sees (nothing else writes them).
template <class T>
__device__ inline void write_zero_dk_dv(const core::AttnParams &p, T *dk, T *dv, int keys_valid,
                                        int tid, int threads) {
  for (int i = tid; i < keys_valid * (p.head_dim / 2); i += threads) {
    const int row = i / (p.head_dim / 2), col = 2 * (i % (p.head_dim / 2));
    *reinterpret_cast<uint32_t *>(dk + row * p.dk.stride_seq + col) = 0u;
    *reinterpret_cast<uint32_t *>(dv + row * p.dv.stride_seq + col) = 0u;
  }
}

// The epilogue of both kernels: dK (times `scale`: dS was unscaled) and dV
// of one warpgroup's 64 keys x kCols columns, from its accumulators
// (element (h, j, e): key row + 8 h, column 8 j + 2 (lane % 4) + e),
// through `tiles` (two XorTiles, in shared memory that nothing reads or
// writes any more) to dk_rows / dv_rows (the first key and column): see
// tile_put_pair. Called by every consumer thread (two barriers of
// consumer_threads); `row` (16 warp + lane / 4) and the lane (lane_id())
// come in fresh: indices kept from before the kernels' main loops were
// held live across them, which spilled at d64.
template <class T, int kCols>
__device__ inline void store_dk_dv(const float (&dk_acc)[kCols / 2],
                                   const float (&dv_acc)[kCols / 2], unsigned char *tiles,
                                   int row, T *dk_rows, int64_t dk_stride, T *dv_rows,
                                   int64_t dv_stride, int keys_valid, int cols_valid, float scale,
                                   int consumer_threads) {
  using Tile = XorTile<64, kCols>;
  unsigned char *const dk_tile = tiles, *const dv_tile = tiles + Tile::kBytes;
  const int lane = lane_id(), col = 2 * (lane % 4), thread = 2 * (row / 16 * 16) + lane;
  named_barrier_sync(1, consumer_threads);  // every GEMM reading that memory is done
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int j = 0; j < kCols / 8; ++j) {
      tile_put_pair<Tile>(dk_tile, row + 8 * h, 8 * j + col,
                          Element<T>::pack(dk_acc[4 * j + 2 * h] * scale,
                                           dk_acc[4 * j + 2 * h + 1] * scale));
      tile_put_pair<Tile>(dv_tile, row + 8 * h, 8 * j + col,
                          Element<T>::pack(dv_acc[4 * j + 2 * h], dv_acc[4 * j + 2 * h + 1]));
    }
  named_barrier_sync(1, consumer_threads);
  tile_copy_out<Tile>(dk_tile, dk_rows, dk_stride, keys_valid, cols_valid, thread, 128);
  tile_copy_out<Tile>(dv_tile, dv_rows, dv_stride, keys_valid, cols_valid, thread, 128);
}

// The mask of a block that needs one, on S^T / P^T in the wgmma accumulator
// layout (wgmma.cuh): element (h, c), at st[4 (c / 2) + 2 h + c % 2], is key
// `key` + 8 h and query `query0` + 8 (c / 2) + 2 in_quad + c % 2. Elements
// whose query does not see the key become 0, one compare each against the
// key's range of queries (visible()'s three compares had compiled to a
// branch per element).
template <int N>
__device__ inline void zero_unseen(const core::Mask &mask, float (&st)[N], int key, int query0,
                                   int in_quad) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const core::IndexRange seen = mask.queries_seeing(key + 8 * h);
#pragma unroll
    for (int c = 0; c < N / 2; ++c)
      if (!seen.contains(query0 + 8 * (c / 2) + 2 * in_quad + c % 2))
        st[4 * (c / 2) + 2 * h + c % 2] = 0.f;
  }
}

}  // namespace fa2::cuda::sm90

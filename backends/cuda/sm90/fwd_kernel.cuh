// FlashAttention-2 forward on Hopper: wgmma, TMA and warp specialisation.
//
// A CTA walks tiles (batch, query head, query block) of core::fwd_item, in
// the order the launcher picks (sm90_fwd_rows_first_above). The launcher
// starts one CTA per SM (persistent; one CTA per tile would also work), and
// while its consumers finish a tile (last P V, epilogue) its producer
// already loads the next one's Q, K and V. Which tiles a CTA takes:
//   fixed lengths    one per round of gridDim.x tiles in a snake order (c,
//                    then 2 G - 1 - c, ... for CTA c of G) so that no CTA
//                    keeps getting the heavier end of a round; producer
//                    and consumers work each tile out alike.
//   varlen (kHandedTiles)  CTA c takes tile c, then the next tile in index
//                    order that no CTA has taken (a ticket from a counter
//                    in the workspace), so tiles of unequal sequences
//                    balance as CTAs free up; the producer works each tile
//                    out once (cu_seqlens, mask, key blocks) and hands it
//                    to the consumers in a shared-memory slot that travels
//                    with the tile's Q stage. (On fixed lengths both cost
//                    0-8%: H200, 2026-12-03, RESULTS.)
// kConsumers + 1 warpgroups:
//   warpgroup 0      the producer. It gives most of its registers away
//                    (setmaxnreg) and one thread issues every load: Q per
//                    tile into one of kQStages buffers (once the consumers'
//                    last Q K^T of the tile before is done with it, or with
//                    Q in registers its start), K and V of each key block
//                    through a kStages-deep ring of shared-memory stages,
//                    each stage a pair of mbarriers (full: the TMA's bytes
//                    have landed; empty: every consumer warp is done
//                    reading), continuing across tiles.
//   warpgroups 1..   the consumers, 64 query rows each (split-Q: no
//                    exchange of partial outputs). S = Q K^T is one wgmma
//                    chain from shared memory (at d128 with Q from
//                    registers, kQInRegisters); the online softmax runs on
//                    the accumulators; P, packed to b16 in registers, is the
//                    A operand of O += P V, whose V is read transposed from
//                    shared memory. O stays unscaled until the end.
// S_i and P_{i-1} V_{i-1} are issued together and the softmax of S_i sits
// between the waits for the two. ptxas would hoist the second wait above
// it (SASS, 2026-11-29); from d128 on a shared-memory store holds it there
// (FwdKernel::kOverlapSoftmax), so that a consumer's softmax overlaps its
// own P V as well as the other consumer's GEMMs. At d64 the hoisted order
// is faster (backends/cuda/NOTES.md).
// Key blocks are visited from the last visible one down, so the diagonal
// (masked) blocks of causal attention come first and the rest are unmasked;
// a warpgroup that sees none of the first block's upper half may compute it
// at half width (FwdKernel::kHalfFirstBlock).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/online_softmax.h"
#include "core/work.h"
#include "empty_rows.cuh"
#include "sm80/smem_tile.cuh"
#include "sm80/tile_ops.cuh"
#include "sm90/hopper_ops.cuh"
#include "sm90/tile_plan.h"
#include "sm90/wgmma.cuh"

namespace fa2::cuda::sm90 {

template <class T, int kHeadDim, int kBlockN, int kConsumers, int kStages, bool kHandedTiles>
struct FwdKernel {
  static constexpr int kBlockM = 64 * kConsumers;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kChunks = kHeadDim / 64;  // 128-byte column chunks of a tile
  static constexpr uint32_t kQBytes = kBlockM * kHeadDim * sizeof(T);
  static constexpr uint32_t kKVBytes = kBlockN * kHeadDim * sizeof(T);
  // Two Q buffers where they fit (the next tile's Q then loads while this
  // one's is still read): [Q x kQStages][K x kStages][V x kStages][barriers].
  static constexpr int kQStages =
      2 * kQBytes + 2 * kStages * kKVBytes + 8 * (4 + 4 * kStages) + 1024 <= kMaxSmemBytes ? 2 : 1;
  static constexpr uint32_t kBarriers = kQStages * kQBytes + 2 * kStages * kKVBytes;  // offset
  // From d128 on, the softmax of S_i runs while P_{i-1} V_{i-1} does, held
  // above the wait for it, with its row max and sum in 8 chains
  // (core::fold_row). H200, 2026-11-30 03:38, against neither: d128 +3..8%
  // without a mask, +1..3% with one, d256 -2..+3% (+2..3% from 8k). At d64
  // the hold cost 4-7% and the 8 chains 3-13% (03:31): one chain, no hold.
  static constexpr bool kOverlapSoftmax = kHeadDim >= 128;
  static constexpr int kSoftmaxChains = kOverlapSoftmax ? 8 : 1;
  // At d256 the row max may lag by 2^8 (core::online_softmax_step's
  // kMaxLag): a warp whose rows all keep theirs skips the rescale of O.
  // H200, against the rescale every block: 2026-12-02 03:42 / 03:51, d256
  // +0..3% / -1..+4% at 512-16k (causal 4k-16k +2..4%); d128 -1..+1% up to
  // 4k, -1..-4% from 8k (the 192-key plan); d64 -1..-2% (03:42).
  static constexpr int kMaxLag = kHeadDim == 256 ? 8 : 0;
  // Two ways to spend less on masked blocks, measured together against
  // neither (2026-12-05, d128's 128-key plan, CUDA events: causal 1k-2k
  // +1.5..2% on the H200, +3..4% on an H100, sustained +1..3%; without a
  // mask level): the first block visited may be half a block wide
  // (run_tile: 64 keys, a wgmma N of its own), and masked elements are
  // found with one compare against the row's range of keys
  // (Mask::keys_seen_by) instead of Mask::visible's three. At d64 the pair
  // cost 1.5-7%, with no mask too (the main loop's schedule moved), and
  // again on 2026-12-06 (2-11%); the range mask alone lost 0-2% (its loop
  // moved), in the first block only (loop kept) it was level. P V over
  // half a block as well lost 1-2.5% at d128.
  static constexpr bool kHalfFirstBlock = kHeadDim == 128 && kBlockN == 128;
  static constexpr bool kRangeMask = kHalfFirstBlock;
  // Q as Q K^T's A operand from registers (ldmatrix once a tile, 32
  // registers) instead of from shared memory every key block; its stage then
  // goes back to the producer as the tile starts. H100, 2026-12-07, CUDA
  // events against Q from shared memory: d128 (128-key plan) 1k +0..3%, 2k
  // +2.7% / causal +4.3%, 4k +2..2.6%; sustained 2k causal +2%, without a
  // mask level. At d64 (16 registers) level; next to d128's 192-key S it
  // spilled 208 bytes; d256 has no room.
  static constexpr bool kQInRegisters = kHeadDim == 128 && kBlockN == 128;
  // One 4-byte slot per consumer thread for hold_above_wait, where it runs.
  static constexpr uint32_t kHoldSlots = kBarriers + 8 * (2 * kQStages + 4 * kStages);  // offset
  // O leaves through shared memory (tile_put_pair, 16-byte pieces of rows)
  // where a 16-row tile per consumer warp fits next to the rest (d64) or
  // into one V stage (kOutInVStage); elsewhere (d256) from the accumulators
  // in 4-byte pieces. H200, 2026-11-30 06:17, against 4-byte stores at d64:
  // +2..4% at 512 and 1k, even from 2k.
  static constexpr int kOutTileBytes = 2 * 16 * kHeadDim;  // one consumer warp's 16 rows
  static constexpr uint32_t kOutTiles =
      kHoldSlots + (kOverlapSoftmax ? 4 * 128 * kConsumers : 0);  // offset
  // Handed tiles: a ring of kTileSlotCount FwdTiles (fwd_kernel: why four)
  // ahead of the 1024-byte aligned layout above.
  static constexpr int kTileSlotCount = 4;
  static constexpr uint32_t kTileSlotBytes = kHandedTiles ? 64 * kTileSlotCount : 0;
  static constexpr bool kStagedEpilogue =
      kTileSlotBytes + kOutTiles + 4 * kConsumers * kOutTileBytes + 1024 <= kMaxSmemBytes;
  static constexpr int kSmemBytes =
      kTileSlotBytes + kOutTiles + (kStagedEpilogue ? 4 * kConsumers * kOutTileBytes : 0) + 1024;
  // Where they do not fit, the out tiles may borrow the last key block's V
  // stage (d128: 32 KB, the eight warps' 4 KB tiles), which then goes back
  // to the producer after the epilogue instead of before it: with three
  // stages the producer is two ahead with the next tile's first blocks by
  // then. H100, 2026-12-05, against 4-byte stores at d128: 1k-4k +0..3%
  // without a mask, +3..6.5% causal; sustained 2k +2.1%, causal +3.4%. With
  // two stages (the 192-key plan, 8k) -1..-2%.
  static constexpr bool kOutInVStage =
      !kStagedEpilogue && kStages >= 3 && 4 * kConsumers * kOutTileBytes <= kKVBytes;
  // There, on fixed lengths, each warp's tile leaves by TMA store (cuDNN's
  // epilogue: stmatrix, then the TMA): one lane issues it and the warp moves
  // on, and the V stage goes back to the producer once the next tile's first
  // block is done, when the store has long read it (waiting for that read
  // right away cost 1.5-3.5%, 2026-12-05). H100, 2026-12-06, CUDA events
  // against the copy-out (five runs): d128 1k +5.6..6.4%, 2k +2.3..2.4%, 4k
  // +0.5..0.7%, causal -0.8..+1.8%; sustained (power_probe) 2k +0.6..2.7%
  // in four probes, 1k +4.6%, 4k +0.8..1.4%, causal 2k -0.3..+1.3%, with up
  // to 3% more GFLOP/J. At d64 (its own out tiles) the same store lost 1.5-3.3%:
  // its main loop came out of ptxas in another order; with the loop kept it
  // was level, causal 1.5-2% slower (2026-12-06 17:45): nothing waits on
  // those tiles. Varlen copies its tiles out: a box could run into the next
  // sequence's rows.
  static constexpr bool kTmaOut = kOutInVStage && !kHandedTiles;
  using OutTile = std::conditional_t<kTmaOut, SwizzledBoxes<16, kHeadDim>, XorTile<16, kHeadDim>>;
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = 240;
  static_assert(register_split_fits(kThreads, kProducerRegs, kConsumers, kConsumerRegs),
                "setmaxnreg would oversubscribe the register file");
  static_assert(kHeadDim % 64 == 0 && kBlockN % 16 == 0 && kConsumers == 2 &&
                    kSmemBytes <= kMaxSmemBytes,
                "bad Hopper forward tile plan");
};

// What the producer hands the consumers per tile (kHandedTiles);
// item.batch < 0 ends their loop.
struct FwdTile {
  core::FwdItem item;
  core::Mask mask;
  core::BlockRange blocks;
  int row0, rows_valid;
  int64_t q_row0;  // the sequence's first row in the packed rows (varlen)
};
static_assert(sizeof(FwdTile) <= 64, "a tile slot is 64 bytes");

// tile_counter: zeroed before the launch (kHandedTiles; unused otherwise).
template <class T, int kHeadDim, int kBlockN, int kConsumers, int kStages, bool kHandedTiles>
__global__ void __launch_bounds__(128 * (kConsumers + 1), 1)
    fwd_kernel(const core::AttnParams p, const __grid_constant__ TmaMaps maps,
               const core::FwdOrder order, unsigned *const tile_counter) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using K = FwdKernel<T, kHeadDim, kBlockN, kConsumers, kStages, kHandedTiles>;
  constexpr int kBlockM = K::kBlockM;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The handed tiles' slots first, at the start of the dynamic shared
  // memory (so that their addresses are 32-bit shared ones with immediate
  // offsets: a generic pointer held across the loads spilled the
  // producer's 24 registers); then, since the 128-byte swizzle repeats
  // every 1024 bytes, the tiles from the next multiple of 1024.
  FwdTile *const tile_slots = reinterpret_cast<FwdTile *>(smem_raw);
  const uint32_t sQ = (smem_address(smem_raw) + K::kTileSlotBytes + 1023u) & ~1023u;
  unsigned char *const smem_base = smem_raw + (sQ - smem_address(smem_raw));
  const uint32_t sK = sQ + K::kQStages * K::kQBytes;  // kStages tiles
  const uint32_t sV = sK + kStages * K::kKVBytes;     // kStages tiles
  const uint32_t bar0 = sQ + K::kBarriers, kv_bar0 = bar0 + 8u * 2 * K::kQStages;
  auto q_full = [&](int s) { return bar0 + 8u * s; };
  auto q_empty = [&](int s) { return bar0 + 8u * (K::kQStages + s); };
  auto k_full = [&](int s) { return kv_bar0 + 8u * s; };
  auto k_empty = [&](int s) { return kv_bar0 + 8u * (kStages + s); };
  auto v_full = [&](int s) { return kv_bar0 + 8u * (2 * kStages + s); };
  auto v_empty = [&](int s) { return kv_bar0 + 8u * (3 * kStages + s); };

  const int tid = threadIdx.x;
  const int64_t num_tiles = core::fwd_items(p, kBlockM);
  auto tile_at = [&](int64_t round) {  // this CTA's tile of a round
    const int64_t base = round * gridDim.x;
    return base + (round % 2 == 0 ? blockIdx.x : gridDim.x - 1 - blockIdx.x);
  };
  // Everything a tile needs.
  auto tile_of = [&](auto index) {
    FwdTile t;
    t.item = core::fwd_item(p, kBlockM, index, order);
    const core::SeqInfo seq = core::seq_info(p, t.item.batch);
    t.q_row0 = seq.q_row0;
    t.row0 = t.item.m_block * kBlockM;
    t.rows_valid = seq.seqlen_q - t.row0;
    t.mask = core::mask_of(p, seq);
    t.blocks = core::key_blocks(t.mask, t.item.m_block, kBlockM, kBlockN);
    return t;
  };
  // Handed tile n's slot. The producer writes it before it waits for tile
  // n's Q stage, i.e. once the consumers have released the Q of tile n - 1
  // - kQStages >= n - 3, so they are done with tile n - 4 (this slot's last
  // tile) and may read theirs until the end of its epilogue.
  static_assert(K::kQStages <= K::kTileSlotCount - 2, "tile slots too few for the Q stages");
  auto tile_slot = [&](int n) { return &tile_slots[n % K::kTileSlotCount]; };

  if (tid == 0) {
    for (int s = 0; s < K::kQStages; ++s) {
      mbar_init(q_full(s), 1);
      mbar_init(q_empty(s), 128 * kConsumers);  // one arrival per consumer thread (release_q)
    }
    for (int s = 0; s < kStages; ++s) {
      mbar_init(k_full(s), 1);
      mbar_init(v_full(s), 1);
      mbar_init(k_empty(s), 4 * kConsumers);
      mbar_init(v_empty(s), 4 * kConsumers);
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (tid < 128) {  // ---------------------------------------------- producer
    regs_release<K::kProducerRegs>();
    if (tid == 0) {
      tma_prefetch_map(maps.q);
      tma_prefetch_map(maps.k);
      tma_prefetch_map(maps.v);
      int kv_loads = 0, q_loads = 0;  // over all tiles: ring and Q phases
      // The next Q stage, for the tile of q_loads (handed: in its slot, or
      // the end); q_full completes once the consumers may read both.
      auto hand_over = [&](uint32_t q_bytes) {
        const int q_stage = q_loads % K::kQStages;
        mbar_wait(q_empty(q_stage), ((q_loads++ / K::kQStages) & 1) ^ 1);
        if (q_bytes > 0)
          mbar_arrive_expect_tx(q_full(q_stage), q_bytes);
        else
          mbar_arrive(q_full(q_stage));
        return q_stage;
      };
      auto load_tile = [&](const FwdTile &t) {
        const int head_kv = core::kv_head_of(p, t.item.head_q);
        acquire_sequence_maps(maps, t.item.batch, kSeqV + 1);
        for (int n_block = t.blocks.end - 1; n_block >= t.blocks.begin; --n_block, ++kv_loads) {
          const int stage = kv_loads % kStages;
          const uint32_t parity = ((kv_loads / kStages) & 1) ^ 1;  // first round passes at once
          mbar_wait(k_empty(stage), parity);
          mbar_arrive_expect_tx(k_full(stage), K::kKVBytes);
          for (int c = 0; c < K::kChunks; ++c)
            tma_load_operand<kSeqK>(maps, t.item.batch,
                                    sK + stage * K::kKVBytes + c * kBlockN * kSwizzleRowBytes,
                                    k_full(stage), 64 * c, n_block * kBlockN, head_kv);
          if (n_block == t.blocks.end - 1) {  // Q after the first K: that may come earlier
            const int q_stage = hand_over(K::kQBytes);
            for (int c = 0; c < K::kChunks; ++c)
              tma_load_operand<kSeqQ>(maps, t.item.batch,
                                      sQ + q_stage * K::kQBytes + c * kBlockM * kSwizzleRowBytes,
                                      q_full(q_stage), 64 * c, t.row0, t.item.head_q);
          }
          mbar_wait(v_empty(stage), parity);
          mbar_arrive_expect_tx(v_full(stage), K::kKVBytes);
          for (int c = 0; c < K::kChunks; ++c)
            tma_load_operand<kSeqV>(maps, t.item.batch,
                                    sV + stage * K::kKVBytes + c * kBlockN * kSwizzleRowBytes,
                                    v_full(stage), 64 * c, n_block * kBlockN, head_kv);
        }
      };
      if constexpr (kHandedTiles) {
        // Tickets are taken after a tile's loads, not before: the round trip
        // to the L2 then overlaps the wait for the ring, and no register
        // holds the next index across the loads (the producer has few).
        for (int index = blockIdx.x; index < int(num_tiles);  // < 2^31: the launcher's rule
             index = int(gridDim.x + atomicAdd(tile_counter, 1u))) {
          {
            const FwdTile tile = tile_of(index);
            if (tile.rows_valid <= 0) continue;  // past a varlen sequence's end: nothing to write
            *tile_slot(q_loads) = tile;
          }
          // Read back from the slot where used: the producer has few registers.
          const FwdTile &t = *tile_slot(q_loads);
          if (t.blocks.empty())  // rows that see no key: the consumers write them
            hand_over(0);
          else
            load_tile(t);
        }
        tile_slot(q_loads)->item.batch = -1;
        hand_over(0);
      } else {
        for (int64_t round = 0, index; (index = tile_at(round)) < num_tiles; ++round) {
          const FwdTile t = tile_of(index);
          if (!t.blocks.empty()) load_tile(t);
        }
      }
    }
    return;
  }

  // ------------------------------------------------------------ consumers
  regs_claim<K::kConsumerRegs>();
  const int wg = warpgroup_index() - 1, lane = tid % 32, warp = (tid / 32) % 4;
  const int group = Sm80MmaLayout::group(lane), in_quad = Sm80MmaLayout::in_quad(lane);
  const int wg_row0 = 64 * wg + 16 * warp + group;  // + 8 h: this thread's rows in the tile
  const QuadRowReduce reduce;
  const FastExp2 exp2;
  auto release = [&](uint32_t bar) {
    __syncwarp();
    if (lane == 0) mbar_arrive(bar);
  };
  // A Q stage goes back with one arrival per consumer thread (once a tile),
  // not per warp: every lane reads its handed tile's slot up to the end of
  // the epilogue, and the producer rewrites that slot once the Q stage of a
  // later tile is back, so each thread's own release orders its reads
  // first. (Through __syncwarp and lane 0 alone, compute-sanitizer's
  // racecheck reported the rewrite as a hazard when a CTA walked four or
  // more handed tiles, 2026-12-03.)
  auto release_q = [&](uint32_t bar) { mbar_arrive(bar); };

  float o[kHeadDim / 2];
  float s[kBlockN / 2];
  uint32_t p_frag[kBlockN / 16][4];
  uint32_t q_frag[K::kQInRegisters ? kHeadDim / 16 : 1][4];
  float scores[2][kBlockN / 4];  // s, viewed per row: [h][2 j + e] = s[4 j + 2 h + e]
  core::RowState row_state[2];
  int kv_reads = 0, q_reads = 0;  // the producer's kv_loads and q_loads
  [[maybe_unused]] int v_stage_held = -1;  // kTmaOut: the tile before's last V stage
  // One tile: t has what the main loop needs (item.m_block, mask, blocks,
  // row0), rows what the epilogue needs (item.batch / head_q, row0,
  // rows_valid), out_of() the tile's first output row.
  auto run_tile = [&](const auto &t, const auto &rows, auto &&out_of, const int q_stage) {
    const int num_blocks = t.blocks.end - t.blocks.begin;
    const uint32_t sQ_wg = sQ + q_stage * K::kQBytes + 64 * wg * kSwizzleRowBytes;
    auto key_block = [&](int i) { return t.blocks.end - 1 - i; };  // i-th visited
    auto stage_of = [&](int i) { return (kv_reads + i) % kStages; };
    auto parity_of = [&](int i) { return uint32_t((kv_reads + i) / kStages) & 1; };

#pragma unroll
    for (int c = 0; c < kHeadDim / 2; ++c) o[c] = 0.f;
    row_state[0] = row_state[1] = core::RowState{};

    // S_i's first kCols columns (kBlockN but in the first block, below).
    auto issue_qk = [&](int i, auto cols) {
      constexpr int kCols = decltype(cols)::value;
      mbar_wait(k_full(stage_of(i)), parity_of(i));
      const uint32_t sK_i = sK + stage_of(i) * K::kKVBytes;
      wgmma_fence();
      if constexpr (K::kQInRegisters)
        wgmma_chain_rs<T, kCols, kHeadDim / 16, 0, false>(leading<kCols / 2>(s), q_frag, sK_i,
                                                          kBlockN);
      else
        wgmma_chain_ss<T, kCols, kHeadDim / 16>(leading<kCols / 2>(s), sQ_wg, kBlockM, sK_i,
                                                kBlockN);
      wgmma_commit();
    };
    constexpr std::integral_constant<int, kBlockN> all_cols;
    constexpr std::integral_constant<int, K::kHalfFirstBlock ? kBlockN / 2 : kBlockN> half_cols;
    auto issue_pv = [&](int i) {
      mbar_wait(v_full(stage_of(i)), parity_of(i));
      const uint32_t sV_i = sV + stage_of(i) * K::kKVBytes;
      wgmma_fence();
      wgmma_chain_rs<T, kHeadDim, kBlockN / 16>(o, p_frag, sV_i, kBlockN);
      wgmma_commit();
    };
    // S_i is in registers: its K stage, and Q after the tile's last block,
    // go back to the producer.
    auto release_k = [&](int i) {
      release(k_empty(stage_of(i)));
      if (!K::kQInRegisters && i == num_blocks - 1) release_q(q_empty(q_stage));
    };
    // Masks S_i's first kCols columns and turns them into unnormalised
    // probabilities in place (the rest, unseen, into zeros); returns the
    // rescale factor of each of the thread's two rows.
    auto softmax = [&](int i, float (&correction)[2], auto cols) {
      constexpr int kCols = decltype(cols)::value;
      const int n_block = key_block(i);
#pragma unroll
      for (int j = 0; j < kCols / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int e = 0; e < 2; ++e) scores[h][2 * j + e] = s[4 * j + 2 * h + e];
      if (core::tile_needs_mask(t.mask, t.item.m_block, n_block, kBlockM, kBlockN)) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = t.row0 + wg_row0 + 8 * h;
          const core::IndexRange seen = t.mask.keys_seen_by(row);
#pragma unroll
          for (int c = 0; c < kCols / 4; ++c) {
            const int col = n_block * kBlockN + 8 * (c / 2) + 2 * in_quad + c % 2;
            if (K::kRangeMask ? !seen.contains(col) : !t.mask.visible(row, col))
              scores[h][c] = -INFINITY;
          }
        }
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        correction[h] = core::online_softmax_step<kCols / 4, K::kSoftmaxChains, K::kMaxLag>(
            leading<kCols / 4>(scores[h]), row_state[h], p.scale_log2, reduce, exp2);
#pragma unroll
        for (int c = kCols / 4; c < kBlockN / 4; ++c) scores[h][c] = 0.f;
      }
    };
    auto pack_p = [&]() {
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
        p_frag[kk][0] = Element<T>::pack(scores[0][4 * kk], scores[0][4 * kk + 1]);
        p_frag[kk][1] = Element<T>::pack(scores[1][4 * kk], scores[1][4 * kk + 1]);
        p_frag[kk][2] = Element<T>::pack(scores[0][4 * kk + 2], scores[0][4 * kk + 3]);
        p_frag[kk][3] = Element<T>::pack(scores[1][4 * kk + 2], scores[1][4 * kk + 3]);
      }
    };

    if constexpr (!kHandedTiles) mbar_wait(q_full(q_stage), (q_reads++ / K::kQStages) & 1);
    if constexpr (K::kQInRegisters) {
      load_a_k_major(q_frag, sQ_wg, kBlockM, warp, lane);
      release_q(q_empty(q_stage));
    }
    float correction[2];
    // The first block visited is the one a mask most often cuts: where this
    // warpgroup's rows see none of its upper half (the causal diagonal for
    // warpgroup 0, a short last block), Q K^T and the softmax skip it.
    const bool first_half =
        K::kHalfFirstBlock && core::keys_end_by(t.mask, t.row0 + 64 * wg + 63,
                                                key_block(0) * kBlockN + kBlockN / 2);
    auto first_block = [&](auto cols) {
      issue_qk(0, cols);
      wgmma_wait<0>();
      pin_registers(leading<decltype(cols)::value / 2>(s));
      release_k(0);
      softmax(0, correction, cols);  // O is still zero: nothing to rescale
    };
    if (first_half)
      first_block(half_cols);
    else
      first_block(all_cols);
    if constexpr (K::kTmaOut) {
      if (v_stage_held >= 0) {
        bulk_wait_read();
        release(v_empty(v_stage_held));
      }
    }
    pack_p();
    for (int i = 1; i < num_blocks; ++i) {
      issue_qk(i, all_cols);
      issue_pv(i - 1);
      wgmma_wait<1>();  // S_i is ready; P_{i-1} V_{i-1} may still run
      pin_registers(s);
      release_k(i);
      softmax(i, correction, all_cols);
      if constexpr (K::kOverlapSoftmax)
        hold_above_wait(sQ + K::kHoldSlots + 4u * (tid - 128),
                        row_state[0].row_sum + row_state[1].row_sum);
      wgmma_wait<0>();
      pin_registers(o);
      pin_registers(p_frag);
      release(v_empty(stage_of(i - 1)));
      if (K::kMaxLag == 0 ||
          __any_sync(0xffffffffu, correction[0] != 1.f || correction[1] != 1.f)) {
#pragma unroll
        for (int j = 0; j < kHeadDim / 8; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            o[4 * j + 2 * h] *= correction[h];
            o[4 * j + 2 * h + 1] *= correction[h];
          }
      }
      pack_p();
    }
    issue_pv(num_blocks - 1);
    wgmma_wait<0>();
    pin_registers(o);
    pin_registers(p_frag);
    const int last_stage = stage_of(num_blocks - 1);
    if constexpr (!K::kOutInVStage) release(v_empty(last_stage));
    kv_reads += num_blocks;

    // Epilogue: one rescale per row, then out and lse.
    [[maybe_unused]] T *const out = out_of();
    using OutTile = typename K::OutTile;
    [[maybe_unused]] constexpr bool kStaged = K::kStagedEpilogue || K::kOutInVStage;
    [[maybe_unused]] unsigned char *const out_tile =
        smem_base + (K::kOutInVStage ? sV - sQ + last_stage * K::kKVBytes : K::kOutTiles) +
        (4 * wg + warp) * OutTile::kBytes;
    if constexpr (K::kOutInVStage)
      named_barrier_sync(1, 128 * kConsumers);  // both warpgroups' last P V are done with V
    else if constexpr (K::kStagedEpilogue)
      __syncwarp();  // the warp is done with the last tile's
    [[maybe_unused]] float out_scale[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const core::RowResult result = core::online_softmax_finish(row_state[h], p.scale, reduce);
      const int row = wg_row0 + 8 * h;
      if constexpr (K::kTmaOut) {
        out_scale[h] = result.out_scale;
      } else if constexpr (kStaged) {
#pragma unroll
        for (int j = 0; j < kHeadDim / 8; ++j)
          tile_put_pair<OutTile>(out_tile, group + 8 * h, 8 * j + 2 * in_quad,
                                 Element<T>::pack(o[4 * j + 2 * h] * result.out_scale,
                                                  o[4 * j + 2 * h + 1] * result.out_scale));
      } else if (row < rows.rows_valid) {
        T *out_row = out + row * p.out.stride_seq;
#pragma unroll
        for (int j = 0; j < kHeadDim / 8; ++j) {
          const int col = 8 * j + 2 * in_quad;
          if (col < p.head_dim)
            *reinterpret_cast<uint32_t *>(out_row + col) = Element<T>::pack(
                o[4 * j + 2 * h] * result.out_scale, o[4 * j + 2 * h + 1] * result.out_scale);
        }
      }
      if (in_quad == 0 && row < rows.rows_valid)
        p.lse[core::row_stat_index(p, rows.item.batch, rows.item.head_q, rows.row0 + row)] =
            result.lse;
    }
    if constexpr (K::kTmaOut) {
      const uint32_t tile = sV + last_stage * K::kKVBytes + (4 * wg + warp) * OutTile::kBytes;
#pragma unroll
      for (int jj = 0; jj < kHeadDim / 16; ++jj) {
        auto pair = [&](int m) {  // 8 x 8 matrix m: rows 8 (m % 2) on, columns 8 (m / 2) on
          return Element<T>::pack(o[8 * jj + 2 * m] * out_scale[m % 2],
                                  o[8 * jj + 2 * m + 1] * out_scale[m % 2]);
        };
        tile_put_block<OutTile>(tile, 0, 16 * jj, lane, pair(0), pair(1), pair(2), pair(3));
      }
      fence_smem_to_async();  // the TMA reads what stmatrix wrote
      __syncwarp();
      const int warp_row0 = 64 * wg + 16 * warp;
      if (lane == 0 && warp_row0 < rows.rows_valid) {
#pragma unroll
        for (int c = 0; c < K::kChunks; ++c)
          tma_store_4d(maps.out, tile + c * OutTile::kBoxBytes, 64 * c, rows.row0 + warp_row0,
                       rows.item.head_q, rows.item.batch);
        bulk_commit();
      }
      v_stage_held = last_stage;
    } else {
      if constexpr (kStaged) {
        __syncwarp();
        const int warp_row0 = 64 * wg + 16 * warp;
        tile_copy_out<OutTile>(out_tile, out + warp_row0 * p.out.stride_seq, p.out.stride_seq,
                               rows.rows_valid - warp_row0, p.head_dim, lane, 32);
      }
      if constexpr (K::kOutInVStage) {
        fence_smem_to_async();  // the TMA writes the stage next
        release(v_empty(last_stage));
      }
    }
  };
  // Rows that see no key (a window, an empty sequence) get 0 and -inf.
  auto write_empty = [&](const FwdTile &rows, T *out) {
    write_empty_rows<T>(p, out, p.out.stride_seq, rows.item.batch, rows.item.head_q, rows.row0,
                        core::min_i(rows.rows_valid, kBlockM), tid - 128, 128 * kConsumers);
  };

  if constexpr (kHandedTiles) {
    for (;;) {
      // The tile's values and the counters are the same across the warp;
      // the compiler sees that only when told (warp_uniform), here where
      // they come from shared memory: else the loop's counters, addresses
      // and wgmma descriptors leave the uniform registers (its main loop
      // grew by 4% at d128, 2026-12-03).
      q_reads = warp_uniform(q_reads);
      const int q_stage = q_reads % K::kQStages;
      mbar_wait(q_full(q_stage), (q_reads / K::kQStages) & 1);
      // The main loop's values in registers; the epilogue reads the rest
      // from the slot, which stays the tile's until then.
      const FwdTile &slot = *tile_slot(q_reads++);
      struct {
        core::FwdItem item;
        core::Mask mask;
        core::BlockRange blocks;
        int row0;
      } const t = {{0, 0, warp_uniform(slot.item.m_block)},
                   {warp_uniform(slot.mask.seqlen_q), warp_uniform(slot.mask.seqlen_k),
                    warp_uniform(slot.mask.left), warp_uniform(slot.mask.right)},
                   {warp_uniform(slot.blocks.begin), warp_uniform(slot.blocks.end)},
                   warp_uniform(slot.row0)};
      if (warp_uniform(slot.item.batch) < 0) break;
      auto out_of = [&]() {  // called where used: no pointer lives across the loop
        return static_cast<T *>(p.out.data) +
               core::row_offset(p.out, slot.item.batch, slot.q_row0, slot.row0, slot.item.head_q);
      };
      if (t.blocks.empty()) {
        release_q(q_empty(q_stage));
        write_empty(slot, out_of());
      } else {
        run_tile(t, slot, out_of, q_stage);
      }
    }
  } else {
    for (int64_t round = 0, index; (index = tile_at(round)) < num_tiles; ++round) {
      const FwdTile t = tile_of(index);
      T *out = static_cast<T *>(p.out.data) +
               core::row_offset(p.out, t.item.batch, core::seq_info(p, t.item.batch).q_row0,
                                t.row0, t.item.head_q);
      if (t.blocks.empty())
        write_empty(t, out);
      else
        run_tile(t, t, [&]() { return out; }, q_reads % K::kQStages);
    }
    if constexpr (K::kTmaOut)  // shared memory outlives the last stores' reads
      if (lane == 0) bulk_wait();
  }
#endif  // __CUDA_ARCH_FEAT_SM90_ALL: other targets get an empty body, never launched
}

}  // namespace fa2::cuda::sm90

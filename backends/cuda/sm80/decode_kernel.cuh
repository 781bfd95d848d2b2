// Decoding on sm80 Tensor Cores: items of at most 16 kSlabs query rows
// (kSlabs mma slabs; core::fold_query_groups makes a GQA group's query
// heads the rows, so Q's and out's rows are addressed one by one) against
// many keys.
//
// An item's key blocks are split into AttnParams::kv_splits parts, a CTA
// per part (blockIdx.x = item x parts + part: an item's parts start
// together and read disjoint K / V). Within a CTA the warps split every
// key block between them, where the forward (fwd_kernel.cuh) splits the
// query rows: warp w of a slab's kKeyWarps takes keys [w kWarpKeys, (w + 1)
// kWarpKeys) of each block against the slab's 16 rows, with its own
// online-softmax state and unscaled accumulator. With the forward's split
// over rows, 1-16 rows left one warp computing and the others idle, its
// chain of mma a block the block's time. A second slab (17-32 rows: a few
// drafted tokens times a GQA group) brings its own warps, which read the
// same K / V stages: the keys cross the memory once for all the rows.
// After the last block each slab's warps' normalised outputs and lse meet
// in shared memory and merge as fwd_combine.cu merges parts:
//     lse = log sum_w exp(lse_w),   out = sum_w exp(lse_w - lse) O_w.
// With more than one part, each part writes its merged rows in fp32 with
// their lse to the partial buffers, which fwd_combine.cu merges.
#pragma once

#include <cstdint>

#include "core/online_softmax.h"
#include "core/work.h"
#include "dependent_launch.cuh"
#include "sm80/smem_tile.cuh"
#include "sm80/warp_gemm.cuh"

namespace fa2::cuda {

template <class T, int kHeadDim, int kBlockN, int kWarps, int kStages, int kSlabs>
struct DecodeKernel {
  static constexpr int kRows = 16 * kSlabs;  // an item's query rows: 16 a slab
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kKeyWarps = kWarps / kSlabs;  // the warps of a slab
  static constexpr int kWarpKeys = kBlockN / kKeyWarps;
  static_assert(kWarps % kSlabs == 0 && kWarpKeys % 16 == 0 && kStages >= 2,
                "bad decoding plan");
  // As the forward's (fwd_kernel.cuh): swizzled K / V rows at d128 / d256.
  static constexpr bool kSwizzle = kHeadDim == 128 || kHeadDim == 256;
  using QTile = TileFor<kRows, kHeadDim, kSwizzle>;
  using KVTile = TileFor<kBlockN, kHeadDim, kSwizzle>;
  using WarpKV = typename KVTile::template WithRows<kWarpKeys>;  // a warp's keys of a block
  // The merge: each warp's normalised 16 rows in fp32 (a row padded by 8
  // floats: the 8 rows of a float2 store then fall in two bank sets, not
  // one) and lse, the slab's warps' weights a row, the rows' lse.
  static constexpr int kMergeStride = kHeadDim + 8;
  static constexpr int kMergeBytes = 4 * (kWarps * 16 * (kMergeStride + 2) + kRows);
  static constexpr int kLoopBytes = QTile::kBytes + 2 * kStages * KVTile::kBytes;
  static constexpr int kSmemBytes = kLoopBytes > kMergeBytes ? kLoopBytes : kMergeBytes;
  static_assert(kSmemBytes <= 163 * 1024, "over the A100's shared memory per block");
};

// For sm_80 ptxas held the d64 kernel to 80 registers and spilled 12 bytes
// unless told that one CTA an SM will do; for sm_90 that bound changes the
// code of every head dim, which was measured without it (NOTES, 21:24–).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define FA2_DECODE_LAUNCH_BOUNDS(threads) __launch_bounds__(threads, 1)
#else
#define FA2_DECODE_LAUNCH_BOUNDS(threads) __launch_bounds__(threads)
#endif

template <class T, int kHeadDim, int kBlockN, int kWarps, int kStages, int kSlabs>
__global__ void FA2_DECODE_LAUNCH_BOUNDS(kWarps * 32) decode_kernel(const core::AttnParams p) {
  using K = DecodeKernel<T, kHeadDim, kBlockN, kWarps, kStages, kSlabs>;
  using QTile = typename K::QTile;
  using KVTile = typename K::KVTile;
  using WarpKV = typename K::WarpKV;
  constexpr int kRows = K::kRows;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const uint32_t sQ = smem_address(smem_raw);
  const uint32_t sK = sQ + QTile::kBytes;             // kStages tiles
  const uint32_t sV = sK + kStages * KVTile::kBytes;  // kStages tiles

  // fwd_combine's CTAs may launch once every CTA here has started; they
  // wait in grid_dependency_wait for this grid's end and its writes, so
  // their launch hides behind this grid's work (fwd_combine.cu).
  grid_launch_dependents();
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  // A slab's warps are neighbours: their merge rows are one run. (One slab:
  // spelled out, since the compiler cannot tell that warp < kWarps.)
  const int slab = kSlabs == 1 ? 0 : warp / K::kKeyWarps;
  const int key_warp = kSlabs == 1 ? warp : warp % K::kKeyWarps;
  const int part = int(blockIdx.x % unsigned(p.kv_splits));
  const core::FwdItem item = core::fwd_item(p, kRows, int64_t(blockIdx.x / unsigned(p.kv_splits)),
                                            core::FwdOrder::head_blocks_together);
  const core::SeqInfo seq = core::seq_info(p, item.batch);
  const int row0 = item.m_block * kRows;
  if (row0 >= seq.seqlen_q) return;  // a shorter sequence of a varlen batch
  const int rows_valid = core::min_i(seq.seqlen_q - row0, kRows);
  const int row_last = row0 + rows_valid - 1;
  // The mask sees the rows' query positions (folded rows: several heads').
  const core::Mask mask = core::query_mask_of(p, seq);
  const core::IndexRange positions = core::query_positions(p, row0, row_last);
  const core::BlockRange blocks = core::split_range(
      core::key_blocks_of_rows(mask, positions, kBlockN), part, p.kv_splits);

  // K and V (Q's rows are addressed one by one, below).
  const core::FwdOperands<T> operands = core::fwd_operands<T>(p, item, seq, row0);
  const T *k = operands.k, *v = operands.v;
  const int num_blocks = blocks.end - blocks.begin;
  // Block i of the part into stage i % kStages; past the last block the
  // group is still committed (empty), which keeps the wait counts uniform.
  auto load_block = [&](int i) {
    if (i >= num_blocks) return;
    const int key0 = (blocks.begin + i) * kBlockN;
    const uint32_t stage = (i % kStages) * KVTile::kBytes;
    load_tile_async<KVTile, K::kThreads>(sK + stage, k + key0 * p.k.stride_seq, p.k.stride_seq,
                                         seq.seqlen_k - key0, p.head_dim, tid);
    load_tile_async<KVTile, K::kThreads>(sV + stage, v + key0 * p.v.stride_seq, p.v.stride_seq,
                                         seq.seqlen_k - key0, p.head_dim, tid);
  };
  {  // Q row by row; rows past the item's and columns past head_dim zero-filled
    const T *const q = static_cast<const T *>(p.q.data);
    constexpr int kChunksPerRow = QTile::kCols / 8;
#pragma unroll
    for (int chunk = tid; chunk < kRows * kChunksPerRow; chunk += K::kThreads) {
      const int row = chunk / kChunksPerRow, col = chunk % kChunksPerRow * 8;
      const bool valid = row < rows_valid && col < p.head_dim;
      const T *src = valid ? q + core::query_row_offset(p, p.q, item.batch, seq.q_row0,
                                                        row0 + row, item.head_q) + col
                           : q;
      cp_async_16(QTile::addr(sQ, row, col), src, valid);
    }
  }
#pragma unroll
  for (int i = 0; i < kStages - 1; ++i) {
    load_block(i);
    cp_async_commit();  // Q travels with block 0
  }

  float o[1][2][kHeadDim / 4];
  zero<1, kHeadDim>(o);
  core::RowState row_state[2];
  row_state[0] = row_state[1] = core::RowState{};  // (fwd_kernel.cuh: assigned, not defaulted)
  const QuadRowReduce reduce;
  typename QTile::Walk q_walk = RowsA<QTile>::walk(sQ, 16 * slab, lane);
  const uint32_t warp_keys = 2u * uint32_t(KVTile::offset(key_warp * K::kWarpKeys, 0));
  const int group = Sm80MmaLayout::group(lane), in_quad = Sm80MmaLayout::in_quad(lane);
  // The positions of this thread's two rows. Rows past the item's end are
  // never written: only its own rows decide whether a block needs the
  // per-element mask.
  const int slab_row0 = row0 + 16 * slab;
  const int position[2] = {core::query_row(p, slab_row0 + group, item.head_q).position,
                           core::query_row(p, slab_row0 + 8 + group, item.head_q).position};
  for (int i = 0; i < num_blocks; ++i) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // block i is visible to all; the stage of block i - 1 is free
    load_block(i + kStages - 1);
    cp_async_commit();
    const uint32_t stage = (i % kStages) * KVTile::kBytes + warp_keys;
    typename WarpKV::Walk k_walk = RowsB<WarpKV>::walk(sK + stage, 0, lane);
    typename WarpKV::Walk v_walk = ColsB<WarpKV>::walk(sV + stage, 0, lane);
    const int key0 = (blocks.begin + i) * kBlockN + key_warp * K::kWarpKeys;

    float s[1][2][K::kWarpKeys / 4];
    zero<1, K::kWarpKeys>(s);
    gemm_nt<T, QTile, WarpKV, 1, K::kWarpKeys, kHeadDim, kHeadDim / 16>(s, q_walk, k_walk);
    if (core::span_needs_mask(mask, positions.begin, positions.end - 1, key0,
                              key0 + K::kWarpKeys - 1)) {
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int c = 0; c < K::kWarpKeys / 4; ++c)
          if (!mask.visible(position[h], key0 + 8 * (c / 2) + 2 * in_quad + c % 2))
            s[0][h][c] = -INFINITY;
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float correction = core::online_softmax_step<K::kWarpKeys / 4>(
          s[0][h], row_state[h], p.scale_log2, reduce, FastExp2{});
#pragma unroll
      for (int c = 0; c < kHeadDim / 4; ++c) o[0][h][c] *= correction;
    }
    PackedA<1, K::kWarpKeys> p_frag;
    pack_acc<T, 1, K::kWarpKeys>(p_frag, s);
    gemm_rn<T, WarpKV, 1, kHeadDim, K::kWarpKeys>(o, p_frag, v_walk);
  }
  cp_async_wait<0>();  // nothing may stay in flight past the loop's shared memory
  __syncthreads();     // every warp is done with K / V: the merge reuses them

  // Each warp's rows, normalised, and their lse (an empty part's too: zeros
  // and -inf, which weigh nothing in either merge); item row r is row r % 16
  // of warp kKeyWarps (r / 16) + w for each w < kKeyWarps.
  float *const merge_out = reinterpret_cast<float *>(smem_raw);
  float *const merge_lse = merge_out + kWarps * 16 * K::kMergeStride;
  float *const warp_out = merge_out + warp * 16 * K::kMergeStride;
  auto warp_row = [&](int row, int w) {
    return kSlabs == 1 ? w * 16 + row : (row / 16 * K::kKeyWarps + w) * 16 + row % 16;
  };
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const core::RowResult result = core::online_softmax_finish(row_state[h], p.scale, reduce);
    const int row = 8 * h + group;
#pragma unroll
    for (int t = 0; t < kHeadDim / 8; ++t)
      *reinterpret_cast<float2 *>(warp_out + row * K::kMergeStride + 8 * t + 2 * in_quad) =
          make_float2(o[0][h][2 * t] * result.out_scale, o[0][h][2 * t + 1] * result.out_scale);
    if (in_quad == 0) merge_lse[warp * 16 + row] = result.lse;
  }
  __syncthreads();
  // Per row: the weights of its slab's warps' rows over theirs, then the
  // row's lse.
  float *const weight = merge_lse + kWarps * 16;         // [kRows][kKeyWarps]
  float *const row_lse = weight + kRows * K::kKeyWarps;  // [kRows]
  if (tid < kRows) {
    float top = -INFINITY;
#pragma unroll
    for (int w = 0; w < K::kKeyWarps; ++w) top = fmaxf(top, merge_lse[warp_row(tid, w)]);
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < K::kKeyWarps; ++w)
      if (merge_lse[warp_row(tid, w)] != -INFINITY) sum += expf(merge_lse[warp_row(tid, w)] - top);
    const float lse = top == -INFINITY ? -INFINITY : top + logf(sum);
#pragma unroll
    for (int w = 0; w < K::kKeyWarps; ++w) {
      const float lse_w = merge_lse[warp_row(tid, w)];
      weight[tid * K::kKeyWarps + w] = lse_w == -INFINITY ? 0.f : expf(lse_w - lse);
    }
    row_lse[tid] = lse;
  }
  __syncthreads();

  const bool to_parts = p.kv_splits > 1;
  const int64_t stat0 =
      (to_parts ? int64_t(part) * p.batch * p.heads_q * p.seqlen_q : 0) +
      core::row_stat_index(p, item.batch, item.head_q, row0);
  if (tid < rows_valid) (to_parts ? p.lse_partial : p.lse)[stat0 + tid] = row_lse[tid];
  T *const out = static_cast<T *>(p.out.data);
  const int columns4 = p.head_dim / 4;
  for (int i = tid; i < rows_valid * columns4; i += K::kThreads) {
    const int row = i / columns4, col = 4 * (i % columns4);
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int w = 0; w < K::kKeyWarps; ++w) {
      const float wt = weight[row * K::kKeyWarps + w];
      const float4 x =
          *reinterpret_cast<const float4 *>(merge_out + warp_row(row, w) * K::kMergeStride + col);
      sum.x += wt * x.x, sum.y += wt * x.y, sum.z += wt * x.z, sum.w += wt * x.w;
    }
    if (to_parts)
      *reinterpret_cast<float4 *>(p.out_partial + (stat0 + row) * p.head_dim + col) = sum;
    else
      *reinterpret_cast<uint2 *>(
          out + core::query_row_offset(p, p.out, item.batch, seq.q_row0, row0 + row, item.head_q) +
          col) =
          make_uint2(Element<T>::pack(sum.x, sum.y), Element<T>::pack(sum.z, sum.w));
  }
}

}  // namespace fa2::cuda

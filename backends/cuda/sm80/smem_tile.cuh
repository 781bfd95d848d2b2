// Shared-memory tiles of b16 elements, [kRows][kCols] row-major, in one of
// two layouts with one interface:
//   SmemTile: every row padded by 16 bytes. ldmatrix reads 8 rows x 16 bytes
//     per matrix: the padding makes the row stride an odd number of 16-byte
//     units, so the 8 rows fall in 8 different bank groups, for any head dim.
//   XorTile: unpadded rows (kCols a multiple of 64) whose 16-byte chunks are
//     XOR-ed with row % 8 within each aligned 128 bytes. The 8 rows of an
//     ldmatrix again hit 8 bank groups, and a 128-byte line copied from global
//     memory lands in one aligned 128 bytes of shared memory: with 528-byte
//     padded rows (d256) each such line straddled two, and the cp.async copies
//     into Q and dO took 7.3 wavefronts an instruction instead of 4 (ncu, sm80
//     d256 backward, 2026-12-02). The forward's K / V copies pay it every key
//     block and use XorTile at d128 / d256; the backward hides those copies
//     behind its GEMMs and keeps padded tiles (fwd_kernel.cuh, bwd_kernel.cuh).
// addr(base, row, col) is the address of an element for any row and column.
// A Walk starts at one lane's address and gives the addresses of blocks at
// offsets known at compile time (drow a multiple of 8, dcol of 8), the form
// the GEMMs' unrolled k loops use. For XorTile it is exact when the bits of
// the lane's chunk (col / 8 % 8) and of dcol / 8 % 8 are disjoint (a warp
// whose columns start at a multiple of 64: the forward's), and the tile's
// base is 128-byte aligned.
#pragma once

#include <cstdint>
#include <type_traits>

#include "sm80/tile_ops.cuh"

namespace fa2::cuda {

template <int kRows_, int kCols_>
struct SmemTile {
  static constexpr int kRows = kRows_;
  static constexpr int kCols = kCols_;
  static constexpr int kStride = kCols + 8;  // elements
  static constexpr int kElems = kRows * kStride;
  static constexpr int kBytes = 2 * kElems;
  // 16-column blocks that a Walk reaches without an XOR: all (see XorTile).
  static constexpr int kFlipBlocks = 1;
  static_assert(kCols % 8 == 0, "rows are copied in 16-byte chunks");
  __device__ static constexpr int offset(int row, int col) { return row * kStride + col; }
  // Byte address of (row, col) in the tile at shared address `base`.
  __device__ static constexpr uint32_t addr(uint32_t base, int row, int col) {
    return base + 2u * uint32_t(offset(row, col));
  }
  struct Walk {
    uint32_t lane;
    __device__ Walk(uint32_t lane_) : lane(lane_) {}
    __device__ uint32_t at(int drow, int dcol) const {
      return lane + 2u * uint32_t(offset(drow, dcol));
    }
    __device__ void reset() {}
  };
  template <int kOtherRows>
  using WithRows = SmemTile<kOtherRows, kCols>;
};

// Columns [c0, c0 + kCols) of a Tile, addressed from the base of the tile
// plus c0 elements (for XorTile, c0 and kCols multiples of 64): what a
// loader needs to copy part of a tile's columns.
template <class Tile, int kCols_>
struct ColumnSlice {
  static constexpr int kRows = Tile::kRows;
  static constexpr int kCols = kCols_;
  static_assert(Tile::kCols >= kCols && kCols % 8 == 0, "a slice of a tile");
  __device__ static constexpr uint32_t addr(uint32_t base, int row, int col) {
    return Tile::addr(base, row, col);
  }
};

// x ^ bits where the compiler cannot move or merge it (volatile): plain
// XORs of a lane address by the few column flips were hoisted out of the
// forward's main loop, each flip a register for the whole loop, and spilled
// (40 bytes at d256).
__device__ inline uint32_t xor_here(uint32_t x, uint32_t bits) {
  uint32_t r;
  asm volatile("xor.b32 %0, %1, %2;\n" : "=r"(r) : "r"(x), "r"(bits));
  return r;
}

template <int kRows_, int kCols_>
struct XorTile {
  static constexpr int kRows = kRows_;
  static constexpr int kCols = kCols_;
  static constexpr int kBytes = 2 * kRows * kCols;
  // 16-column blocks 16 * j and 16 * (j + kFlipBlocks) share a Walk's flip:
  // a GEMM that visits its blocks in that order XORs once a class.
  static constexpr int kFlipBlocks = 4;
  static_assert(kCols % 64 == 0, "pieces swizzle by row % 8");
  // Unsigned, so that the compiler sees (row + 8 j) % 8 == row % 8 where a
  // loop walks down the rows (signed, it formed one address per row).
  __device__ static constexpr int offset(int row, int col) {
    const unsigned r = row, c = col;
    return int(r * kCols + (((c / 8) ^ (r % 8)) * 8) + c % 8);
  }
  __device__ static constexpr uint32_t addr(uint32_t base, int row, int col) {
    return base + 2u * uint32_t(offset(row, col));
  }
  // The lane address carries the flip of the last block visited: a walk is
  // one register, moved by one XOR where the next block's flip differs
  // (once a k step for K-major reads). The flip is known at compile time
  // where the walk's loops are unrolled. Row and 64-column offsets are adds
  // that fold into the load's immediate offset.
  struct Walk {
    uint32_t lane, flip;
    // flip set here, not by a default member initializer (fwd_kernel.cuh's
    // RowState: nvcc 13.0 dropped one of those once).
    __device__ Walk(uint32_t lane_) : lane(lane_), flip(0) {}
    __device__ uint32_t at(int drow, int dcol) {
      const uint32_t want = 16u * uint32_t((dcol / 8) % 8);
      if (want != flip) lane = xor_here(lane, want ^ flip), flip = want;
      return lane + 2u * uint32_t(drow * kCols + dcol / 64 * 64);
    }
    // Back to the lane's own address (a walk kept across a loop).
    __device__ void reset() {
      if (flip != 0) lane = xor_here(lane, flip), flip = 0;
    }
  };
  template <int kOtherRows>
  using WithRows = XorTile<kOtherRows, kCols>;
};

template <int kRows, int kCols, bool kSwizzle>
using TileFor = std::conditional_t<kSwizzle && kCols % 64 == 0, XorTile<kRows, kCols>,
                                   SmemTile<kRows, kCols>>;

// A [kRows][kCols] tile as the TMA's 128-byte swizzle lays out boxes of 64
// columns: box after box, each an XorTile<kRows, 64> (its rows of 128 bytes
// are the swizzle's; boxes start on its 1024-byte period where the tile
// does). What a TMA store reads (sm90 forward, FwdKernel::kTmaOut).
template <int kRows_, int kCols_>
struct SwizzledBoxes {
  using Box = XorTile<kRows_, 64>;
  static constexpr int kRows = kRows_;
  static constexpr int kCols = kCols_;
  static constexpr int kBoxBytes = Box::kBytes;
  static constexpr int kBytes = 2 * kRows * kCols;
  static_assert(kCols % 64 == 0 && kBoxBytes % 1024 == 0, "whole swizzle periods a box");
  __device__ static constexpr uint32_t addr(uint32_t base, int row, int col) {
    return Box::addr(base + uint32_t(col / 64 * kBoxBytes), row, col % 64);
  }
};

// An accumulator tile on its way out: each thread puts its element pairs
// into a shared-memory tile (SmemTile or XorTile: 8 rows' pairs of one
// column block land in 8 different bank groups), then every thread copies
// whole 16-byte pieces of rows to global memory. Stored from the
// accumulators directly, 4-byte pieces filled the store queue (lg_throttle
// and drain: 18% of the Hopper d128 backward's samples at 512 tokens, ncu
// 2026-11-30). `tile` is a generic pointer into shared memory.
template <class Tile>
__device__ inline void tile_put_pair(unsigned char *tile, int row, int col, uint32_t pair) {
  *reinterpret_cast<uint32_t *>(tile + 2 * Tile::offset(row, col)) = pair;
}
// A 16 x 16 block of an mma accumulator (rows row0.., columns col0..; its
// four 8 x 8 matrices top-left, bottom-left, top-right, bottom-right in the
// mma C layout, packed to b16) by one stmatrix.x4, sm_90 and later: lane l
// addresses row l % 8 of matrix l / 8. Any tile kind (16-byte row pieces).
template <class Tile>
__device__ inline void tile_put_block(uint32_t tile, int row0, int col0, int lane, uint32_t r0,
                                      uint32_t r1, uint32_t r2, uint32_t r3) {
  stmatrix_x4(Tile::addr(tile, row0 + lane % 8 + 8 * (lane / 8 % 2), col0 + 8 * (lane / 16)), r0,
              r1, r2, r3);
}
// A [kSlabs x 16][kN] mma accumulator ([slab][row half][column pairs], as
// the warp GEMMs leave it) packed to T, at (row0, col0): one tile_put_block
// a 16 x 16 block.
template <class T, class Tile, int kSlabs, int kN>
__device__ inline void tile_put_acc(uint32_t tile, int row0, int col0,
                                    const float (&acc)[kSlabs][2][kN / 4], int lane) {
#pragma unroll
  for (int s = 0; s < kSlabs; ++s)
#pragma unroll
    for (int b = 0; b < kN / 16; ++b)
      tile_put_block<Tile>(tile, row0 + 16 * s, col0 + 16 * b, lane,
                           Element<T>::pack(acc[s][0][4 * b], acc[s][0][4 * b + 1]),
                           Element<T>::pack(acc[s][1][4 * b], acc[s][1][4 * b + 1]),
                           Element<T>::pack(acc[s][0][4 * b + 2], acc[s][0][4 * b + 3]),
                           Element<T>::pack(acc[s][1][4 * b + 2], acc[s][1][4 * b + 3]));
}
// Rows < rows_valid and columns < cols_valid (a multiple of 8) to dst (row
// stride in elements, 16-byte aligned rows); `threads` threads from `thread`.
template <class Tile, class T>
__device__ inline void tile_copy_out(const unsigned char *tile, T *dst, int64_t stride,
                                     int rows_valid, int cols_valid, int thread, int threads) {
  constexpr int kPieces = Tile::kCols / 8;
#pragma unroll 4
  for (int i = thread; i < Tile::kRows * kPieces; i += threads) {
    const int row = i / kPieces, col = 8 * (i % kPieces);
    if (row < rows_valid && col < cols_valid)
      *reinterpret_cast<uint4 *>(dst + row * stride + col) =
          *reinterpret_cast<const uint4 *>(tile + 2 * Tile::offset(row, col));
  }
}

// How many copies a thread makes of one tile in load_tile_async's form.
template <class Tile, int kThreads>
constexpr int tile_pieces() {
  constexpr int kRowStep = kThreads / (Tile::kCols / 8);
  return (Tile::kRows + kRowStep - 1) / kRowStep;
}

// A thread's copies of one tile in load_tile_async's form, issued one at a
// time among other work (issue(0), issue(1), ... in order): one 64-bit
// pointer walks down the rows. Each copy's address formed afresh took ~12
// instructions (~100 a key block for the sm80 d256 forward's V, ncu
// 2026-12-03); the walk takes a 64-bit add. H200 through FA2_CUDA_PATH=sm80,
// 2026-12-03 ~19:25: the d256 backward's Q / dO copies +1.5..3.2% at
// 512-8k; d192's forward within +-1%.
template <class Tile, int kThreads, bool kWholeTiles, class T>
struct TileCopies {
  static constexpr int kChunksPerRow = Tile::kCols / 8;
  static_assert(kThreads >= kChunksPerRow, "piecewise copy");
  static constexpr int kRowStep = kThreads / kChunksPerRow;
  static constexpr int kCount = tile_pieces<Tile, kThreads>();
  uint32_t smem;
  const T *src, *fallback;
  int64_t step;
  int row0, col, rows_valid;
  bool whole, idle;
  __device__ TileCopies(uint32_t smem_, const T *gmem, int64_t row_stride, int rows_valid_,
                        int cols_valid, int tid)
      : smem(smem_), fallback(gmem), step(kRowStep * row_stride),
        row0(tid / kChunksPerRow), col((tid % kChunksPerRow) * 8) {
    src = gmem + row0 * row_stride + col;
    // As in load_tile_async: threads past kRowStep whole rows copy nothing (d192).
    idle = kThreads % kChunksPerRow != 0 && tid >= kRowStep * kChunksPerRow;
    whole = kWholeTiles && rows_valid_ >= Tile::kRows && cols_valid >= Tile::kCols;
    rows_valid = col < cols_valid ? rows_valid_ : 0;
  }
  __device__ void issue(int it) {
    const int row = row0 + it * kRowStep;
    if (idle || (Tile::kRows % kRowStep != 0 && row >= Tile::kRows)) return;
    const bool valid = whole || row < rows_valid;
    cp_async_16(Tile::addr(smem, row, col), valid ? src : fallback, valid);
    src += step;
  }
};

// Cooperative asynchronous copy of one tile from rows of a strided tensor.
// Rows >= rows_valid and columns >= cols_valid are zero-filled, so padded
// head dims and ragged sequence ends need no copy and no branch later.
// `gmem` points at row 0 of the tile, which always exists.
// kWholeTiles: a whole tile (rows_valid and cols_valid cover it) takes a
// branch of its own, with no per-row test and no fallback address.
template <class Tile, int kThreads, bool kWholeTiles = false, class T>
__device__ inline void load_tile_async(uint32_t smem, const T *gmem, int64_t row_stride,
                                       int rows_valid, int cols_valid, int tid) {
  constexpr int kChunksPerRow = Tile::kCols / 8;
  constexpr int kChunks = Tile::kRows * kChunksPerRow;
  if constexpr (kThreads >= kChunksPerRow) {
    // Each thread keeps one column and walks down the rows with one 64-bit
    // pointer. (Computing row * row_stride per chunk let the compiler hoist
    // one 64-bit offset per chunk out of the kernels' main loops: two
    // registers each, 32+ in all, which is what pushed them into spills.)
    // Where kChunksPerRow does not divide kThreads (d96: 12 chunks), the
    // last kThreads % kChunksPerRow threads copy nothing.
    constexpr int kRowStep = kThreads / kChunksPerRow;
    if (kThreads % kChunksPerRow != 0 && tid >= kRowStep * kChunksPerRow) return;
    const int row0 = tid / kChunksPerRow, col = (tid % kChunksPerRow) * 8;
    const T *src = gmem + row0 * row_stride + col;
    const int64_t step = kRowStep * row_stride;
    if (kWholeTiles && rows_valid >= Tile::kRows && cols_valid >= Tile::kCols) {
#pragma unroll
      for (int it = 0; it < (Tile::kRows + kRowStep - 1) / kRowStep; ++it) {
        if (Tile::kRows % kRowStep != 0 && row0 + it * kRowStep >= Tile::kRows) break;
        cp_async_16(Tile::addr(smem, row0 + it * kRowStep, col), src, true);
        src += step;
      }
      return;
    }
#pragma unroll
    for (int it = 0; it < (Tile::kRows + kRowStep - 1) / kRowStep; ++it) {
      const int row = row0 + it * kRowStep;
      if (Tile::kRows % kRowStep != 0 && row >= Tile::kRows) break;
      const bool valid = row < rows_valid && col < cols_valid;
      cp_async_16(Tile::addr(smem, row, col), valid ? src : gmem, valid);
      src += step;
    }
  } else {
#pragma unroll
    for (int it = 0; it < (kChunks + kThreads - 1) / kThreads; ++it) {
      const int chunk = it * kThreads + tid;
      if (kChunks % kThreads != 0 && chunk >= kChunks) break;
      const int row = chunk / kChunksPerRow;
      const int col = (chunk % kChunksPerRow) * 8;
      const bool valid = row < rows_valid && col < cols_valid;
      const T *src = valid ? gmem + row * row_stride + col : gmem;
      cp_async_16(Tile::addr(smem, row, col), src, valid);
    }
  }
}

// Cooperative asynchronous copy of kCount consecutive floats (4-byte
// cp.async, through L1); entries >= `valid` are zero-filled. For per-row
// statistics: a plain global load would stall its thread until the data
// arrive. kConstantTrip: a loop of constant trip count. The plain form
// (`i = tid; i < kCount; i += kThreads`) compiles to a generic loop
// unrolled by four with a remainder, ~50 instructions and 4 branches a
// call, as the compiler cannot know that tid < kThreads (ncu 2026-12-01,
// the d64 backward's SASS); which form is faster depends on the kernel
// around it (bwd_kernel.cuh, kConstantTripStats).
template <int kCount, int kThreads, bool kConstantTrip = false>
__device__ inline void load_floats_async(uint32_t smem, const float *gmem, int valid, int tid) {
  auto copy = [&](int i) {
    const bool ok = i < valid;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem + 4u * uint32_t(i)),
                 "l"(ok ? gmem + i : gmem), "r"(ok ? 4 : 0));
  };
  if constexpr (kConstantTrip) {
#pragma unroll
    for (int k = 0; k < (kCount + kThreads - 1) / kThreads; ++k) {
      const int i = tid + k * kThreads;
      if (kCount % kThreads != 0 && i >= kCount) break;
      copy(i);
    }
  } else {
    for (int i = tid; i < kCount; i += kThreads) copy(i);
  }
}

}  // namespace fa2::cuda

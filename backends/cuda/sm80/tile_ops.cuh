// The sm80 tile vocabulary: asynchronous 16-byte copies, ldmatrix, the
// m16n8k16 Tensor Core instruction and the register layout of its
// fragments. Everything that knows about lanes lives here.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace fa2::cuda {

// Register layout of mma.m16n8k16 (PTX ISA, "Matrix Fragments for
// mma.m16n8k16"). Lane l is in quad group = l / 4 at position
// in_quad = l % 4. C/D: floats {c0,c1} are row group, columns 2*in_quad
// and 2*in_quad+1; {c2,c3} the same columns of row group+8. The four lanes
// of a quad therefore share a row, which is what the softmax row
// reduction must combine.
struct Sm80MmaLayout {
  static constexpr int kLanesPerRow = 4;
  static constexpr int kRowsPerTile = 16;  // M of one mma
  static constexpr int kColsPerTile = 8;   // N of one mma
  static constexpr int kDepth = 16;        // K of one mma
  __device__ static int group(int lane) { return lane / kLanesPerRow; }
  __device__ static int in_quad(int lane) { return lane % kLanesPerRow; }
};

// core::online_softmax's RowReduce: combine the lanes that share a C row.
struct QuadRowReduce {
  __device__ float max(float x) const {
#pragma unroll
    for (int offset = 1; offset < Sm80MmaLayout::kLanesPerRow; offset *= 2)
      x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
    return x;
  }
  __device__ float sum(float x) const {
#pragma unroll
    for (int offset = 1; offset < Sm80MmaLayout::kLanesPerRow; offset *= 2)
      x += __shfl_xor_sync(0xffffffffu, x, offset);
    return x;
  }
};

// dQ atomics in 128-byte pieces. The L2 takes about one cycle a request
// plus one a 32-byte sector (H200, ncu): one 8-byte atomic a lane covers 8
// rows x 32 bytes a warp, 16-byte ones that a lane's neighbours continue
// cover 4 rows x 128 bytes. For 32 columns of a C fragment (column tiles 4 k
// .. 4 k + 3, elements 2 in_quad + e, of row group + 8 h): neighbouring lanes
// swap pairs so that each holds 4 adjacent columns of tiles 4 k, 4 k + 1 (a)
// and of 4 k + 2, 4 k + 3 (b); then neighbouring quads (rows r, r + 1) swap a
// and b, so that two quads together hold 32 adjacent columns of one row, then
// of the other. Every lane of the warp takes part (shuffles).
struct RowPieces {
  bool odd_lane, odd_row;
  int lane_col;  // the first of the lane's 4 columns within the 32
  __device__ explicit RowPieces(int lane)
      : odd_lane(Sm80MmaLayout::in_quad(lane) & 1),
        odd_row(Sm80MmaLayout::group(lane) & 1),
        lane_col(8 * odd_lane + 2 * (Sm80MmaLayout::in_quad(lane) - odd_lane) + 16 * odd_row) {}
  // tile[t * tile_stride + e]: element e of column tile 4 k + t of the
  // lane's row. Gives the lane's 4 columns of the even row (group & ~1) and
  // of the odd one.
  __device__ void gather(const float *tile, int tile_stride, float (&even_row)[4],
                         float (&odd_row_vals)[4]) const {
    float quad[2][4];  // [a, b][4 adjacent columns]
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const float *lo = tile + 2 * half * tile_stride, *hi = lo + tile_stride;
      const float got0 = __shfl_xor_sync(0xffffffffu, odd_lane ? lo[0] : hi[0], 1);
      const float got1 = __shfl_xor_sync(0xffffffffu, odd_lane ? lo[1] : hi[1], 1);
      quad[half][0] = odd_lane ? got0 : lo[0];
      quad[half][1] = odd_lane ? got1 : lo[1];
      quad[half][2] = odd_lane ? hi[0] : got0;
      quad[half][3] = odd_lane ? hi[1] : got1;
    }
    // Even rows keep a and give b; odd rows keep b and give a.
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float own_val = odd_row ? quad[1][e] : quad[0][e];
      const float got = __shfl_xor_sync(0xffffffffu, odd_row ? quad[0][e] : quad[1][e], 4);
      even_row[e] = odd_row ? got : own_val;
      odd_row_vals[e] = odd_row ? own_val : got;
    }
  }
};
// The lane index read afresh: values derived from it stay out of registers
// until used (from threadIdx.x, the compiler keeps them live across loops).
__device__ inline int lane_id() {
  int lane;
  asm volatile("mov.u32 %0, %%laneid;\n" : "=r"(lane));
  return lane;
}
// dst[0..3] += {x, y, z, w} in global memory, one vector atomic (sm_90 and
// later; dst 16-byte aligned).
__device__ inline void red_add_v4_f32(float *dst, float x, float y, float z, float w) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst), "f"(x), "f"(y),
               "f"(z), "f"(w)
               : "memory");
}
// Four 8x8 b16 matrices from the mma fragment layout (register i of lane l:
// row l / 4, columns 2 (l % 4) and + 1 of matrix i) to shared memory; lane
// l gives the address of row l % 8 of matrix l / 8 (16 bytes). sm_90 and
// later.
__device__ inline void stmatrix_x4(uint32_t row_address, uint32_t r0, uint32_t r1, uint32_t r2,
                                   uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                   row_address),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// Per element type: how two floats become one 32-bit operand register and
// which mma variant multiplies them.
template <class T>
struct Element;

template <>
struct Element<__half> {
  __device__ static uint32_t pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
  }
  __device__ static void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ static float to_float(__half x) { return __half2float(x); }
};

template <>
struct Element<__nv_bfloat16> {
  __device__ static uint32_t pack(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
  }
  __device__ static void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ static float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
};

// exp2 on the special-function unit (one MUFU.EX2), for the softmax of
// both paths: exp2f without -ftz adds a range test and two multiplies per
// score to keep subnormal results. Flushing them is harmless: p is
// relative to the row's maximum (its own p is 1), so a p below 2^-126 adds
// nothing to the row sum nor, rounded to b16, to P V.
// exp2(-inf) = +0, as core::online_softmax_step requires.
struct FastExp2 {
  __device__ float operator()(float x) const {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
  }
};

// Shared memory is addressed by 32-bit offsets in the shared window
// (cvta once per kernel), not by generic 64-bit pointers: every live
// address then costs one register instead of two.
__device__ inline uint32_t smem_address(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, bypassing L1. When `valid` is false nothing is
// read and the destination is zero-filled: this is how rows past the end of
// a sequence and head-dim columns past the caller's head_dim become zeros.
__device__ inline void cp_async_16(uint32_t smem, const void *gmem, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem),
               "r"(src_bytes));
}
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}
// cp.async.wait_group for a count known only once a loop is unrolled
// (0 <= pending <= kMax).
template <int kMax>
__device__ inline void cp_async_wait_unrolled(int pending) {
  if (pending == kMax) {
    cp_async_wait<kMax>();
  } else if constexpr (kMax > 0) {
    cp_async_wait_unrolled<kMax - 1>(pending);
  }
}

__device__ inline void st_shared_b32(uint32_t smem, uint32_t x) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(smem), "r"(x) : "memory");
}

// Four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i,
// and register i receives matrix i (row lane/4, columns 2*(lane%4)+{0,1}).
__device__ inline void ldmatrix_x4(uint32_t (&r)[4], uint32_t smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem));
}
// Transposed: register i receives column lane/4, rows 2*(lane%4)+{0,1}.
__device__ inline void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem));
}

}  // namespace fa2::cuda

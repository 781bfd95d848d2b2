// Warpgroup MMA instructions (sm_90a), m64nNk16 with fp32 accumulators:
//   Wgmma<N>::ss<T, kTransA, kTransB>
//                    A and B from shared memory (descriptors), K-major unless
//                    transposed (MN-major): S += Q K^T; dQ += dS K
//                    (ss_overwrite: D = A B, the first k-step)
//   Wgmma<N>::rs<T, kTransB>
//                    A from registers, B from shared memory, MN-major unless
//                    kTransB is 0: O += P V; S = Q K^T with Q in registers
//                    (rs_overwrite: D = A B)
//
// Accumulator layout (PTX ISA, "wgmma .m64nNk16 register fragments"):
// warp w of the warpgroup owns rows 16 w .. 16 w + 15; within a warp it is
// the mma.m16n8 C layout repeated over N / 8 column tiles: d[4 j + 2 h + e]
// is row 16 w + lane / 4 + 8 h, column 8 j + 2 (lane % 4) + e. The A
// register fragment of one k-step is mma.m16n8k16's A fragment, so two
// neighbouring accumulator column tiles, packed to b16, are one k-step of A.
//
// Inline PTX cannot loop over operands, so each N spells out its
// accumulator list (in groups of 8); the N / 2 accumulators are operands
// 0 .. N/2 - 1 and the inputs follow them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "sm80/tile_ops.cuh"
#include "sm90/hopper_ops.cuh"

namespace fa2::cuda::sm90 {

#define FA2_REGS_0 "%0,%1,%2,%3,%4,%5,%6,%7"
#define FA2_REGS_8 "%8,%9,%10,%11,%12,%13,%14,%15"
#define FA2_REGS_16 "%16,%17,%18,%19,%20,%21,%22,%23"
#define FA2_REGS_24 "%24,%25,%26,%27,%28,%29,%30,%31"
#define FA2_REGS_32 "%32,%33,%34,%35,%36,%37,%38,%39"
#define FA2_REGS_40 "%40,%41,%42,%43,%44,%45,%46,%47"
#define FA2_REGS_48 "%48,%49,%50,%51,%52,%53,%54,%55"
#define FA2_REGS_56 "%56,%57,%58,%59,%60,%61,%62,%63"
#define FA2_REGS_64 "%64,%65,%66,%67,%68,%69,%70,%71"
#define FA2_REGS_72 "%72,%73,%74,%75,%76,%77,%78,%79"
#define FA2_REGS_80 "%80,%81,%82,%83,%84,%85,%86,%87"
#define FA2_REGS_88 "%88,%89,%90,%91,%92,%93,%94,%95"
#define FA2_REGS_96 "%96,%97,%98,%99,%100,%101,%102,%103"
#define FA2_REGS_104 "%104,%105,%106,%107,%108,%109,%110,%111"
#define FA2_REGS_112 "%112,%113,%114,%115,%116,%117,%118,%119"
#define FA2_REGS_120 "%120,%121,%122,%123,%124,%125,%126,%127"
#define FA2_ACC8(C, d, i) \
  C(d[i]), C(d[i + 1]), C(d[i + 2]), C(d[i + 3]), C(d[i + 4]), C(d[i + 5]), C(d[i + 6]), C(d[i + 7])

#define FA2_REGS_N32 "{" FA2_REGS_0 "," FA2_REGS_8 "}"
#define FA2_REGS_N64 "{" FA2_REGS_0 "," FA2_REGS_8 "," FA2_REGS_16 "," FA2_REGS_24 "}"
#define FA2_REGS_N80 \
  "{" FA2_REGS_0 "," FA2_REGS_8 "," FA2_REGS_16 "," FA2_REGS_24 "," \
  FA2_REGS_32 "}"
#define FA2_REGS_N128 \
  "{" FA2_REGS_0 "," FA2_REGS_8 "," FA2_REGS_16 "," FA2_REGS_24 "," \
  FA2_REGS_32 "," FA2_REGS_40 "," FA2_REGS_48 "," FA2_REGS_56 "}"
#define FA2_REGS_N192 \
  "{" FA2_REGS_0 "," FA2_REGS_8 "," FA2_REGS_16 "," FA2_REGS_24 "," \
  FA2_REGS_32 "," FA2_REGS_40 "," FA2_REGS_48 "," FA2_REGS_56 "," \
  FA2_REGS_64 "," FA2_REGS_72 "," FA2_REGS_80 "," FA2_REGS_88 "}"
#define FA2_REGS_N256 \
  "{" FA2_REGS_0 "," FA2_REGS_8 "," FA2_REGS_16 "," FA2_REGS_24 "," \
  FA2_REGS_32 "," FA2_REGS_40 "," FA2_REGS_48 "," FA2_REGS_56 "," \
  FA2_REGS_64 "," FA2_REGS_72 "," FA2_REGS_80 "," FA2_REGS_88 "," \
  FA2_REGS_96 "," FA2_REGS_104 "," FA2_REGS_112 "," FA2_REGS_120 "}"
#define FA2_ACC_N32(C, d) FA2_ACC8(C, d, 0), FA2_ACC8(C, d, 8)
#define FA2_ACC_N64(C, d) \
  FA2_ACC8(C, d, 0), FA2_ACC8(C, d, 8), FA2_ACC8(C, d, 16), \
  FA2_ACC8(C, d, 24)
#define FA2_ACC_N80(C, d) \
  FA2_ACC8(C, d, 0), FA2_ACC8(C, d, 8), FA2_ACC8(C, d, 16), \
  FA2_ACC8(C, d, 24), FA2_ACC8(C, d, 32)
#define FA2_ACC_N128(C, d) \
  FA2_ACC8(C, d, 0), FA2_ACC8(C, d, 8), FA2_ACC8(C, d, 16), \
  FA2_ACC8(C, d, 24), FA2_ACC8(C, d, 32), FA2_ACC8(C, d, 40), \
  FA2_ACC8(C, d, 48), FA2_ACC8(C, d, 56)
#define FA2_ACC_N192(C, d) \
  FA2_ACC8(C, d, 0), FA2_ACC8(C, d, 8), FA2_ACC8(C, d, 16), \
  FA2_ACC8(C, d, 24), FA2_ACC8(C, d, 32), FA2_ACC8(C, d, 40), \
  FA2_ACC8(C, d, 48), FA2_ACC8(C, d, 56), FA2_ACC8(C, d, 64), \
  FA2_ACC8(C, d, 72), FA2_ACC8(C, d, 80), FA2_ACC8(C, d, 88)
#define FA2_ACC_N256(C, d) \
  FA2_ACC8(C, d, 0), FA2_ACC8(C, d, 8), FA2_ACC8(C, d, 16), \
  FA2_ACC8(C, d, 24), FA2_ACC8(C, d, 32), FA2_ACC8(C, d, 40), \
  FA2_ACC8(C, d, 48), FA2_ACC8(C, d, 56), FA2_ACC8(C, d, 64), \
  FA2_ACC8(C, d, 72), FA2_ACC8(C, d, 80), FA2_ACC8(C, d, 88), \
  FA2_ACC8(C, d, 96), FA2_ACC8(C, d, 104), FA2_ACC8(C, d, 112), \
  FA2_ACC8(C, d, 120)
// Accumulate ("+f": the old values are inputs) or overwrite ("=f": they are
// dead, so the compiler need not keep them alive until the instruction).
#define FA2_ACCUMULATE(x) "+f"(x)
#define FA2_OVERWRITE(x) "=f"(x)

// I0.. are the operand numbers that follow the accumulators (N / 2, ...).
#define FA2_WGMMA_SS(TYPE, N, C, SCALE_D, d, I0, I1, I2, I3)                              \
  asm volatile(" wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #TYPE "." #TYPE        \
               " " FA2_REGS_N##N ", %" #I0 ", %" #I1 ", " #SCALE_D ", 1, 1, %" #I2        \
               ", %" #I3 ";\n"                                                             \
               : FA2_ACC_N##N(C, d)                                                        \
               : "l"(desc_a), "l"(desc_b), "n"(kTransA), "n"(kTransB))
#define FA2_WGMMA_RS(TYPE, N, C, SCALE_D, d, I0, I1, I2, I3, I4, I5)                      \
  asm volatile(" wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #TYPE "." #TYPE        \
               " " FA2_REGS_N##N ", {%" #I0 ", %" #I1 ", %" #I2 ", %" #I3 "}, %" #I4      \
               ", " #SCALE_D ", 1, 1, %" #I5 ";\n"                                          \
               : FA2_ACC_N##N(C, d)                                                        \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "n"(kTransB))

template <int N>
struct Wgmma;

// The PTX type name of T goes first into the instruction macro.
#define FA2_FOR_TYPE(T, INSTRUCTION, ...)       \
  if constexpr (std::is_same_v<T, __half>)      \
    INSTRUCTION(f16, __VA_ARGS__);              \
  else                                          \
    INSTRUCTION(bf16, __VA_ARGS__)

#define FA2_DEFINE_WGMMA(N, I0, I1, I2, I3, I4, I5)                                            \
  template <>                                                                                \
  struct Wgmma<N> {                                                                          \
    template <class T, int kTransA = 0, int kTransB = 0>                                     \
    __device__ static void ss_overwrite(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b) { \
      FA2_FOR_TYPE(T, FA2_WGMMA_SS, N, FA2_OVERWRITE, 0, d, I0, I1, I2, I3);                 \
    }                                                                                        \
    template <class T, int kTransA = 0, int kTransB = 0>                                     \
    __device__ static void ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b) {         \
      FA2_FOR_TYPE(T, FA2_WGMMA_SS, N, FA2_ACCUMULATE, 1, d, I0, I1, I2, I3);                \
    }                                                                                        \
    template <class T, int kTransB = 1>                                                      \
    __device__ static void rs_overwrite(float (&d)[N / 2], const uint32_t (&a)[4],          \
                                        uint64_t desc_b) {                                  \
      FA2_FOR_TYPE(T, FA2_WGMMA_RS, N, FA2_OVERWRITE, 0, d, I0, I1, I2, I3, I4, I5);         \
    }                                                                                        \
    template <class T, int kTransB = 1>                                                      \
    __device__ static void rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b) {  \
      FA2_FOR_TYPE(T, FA2_WGMMA_RS, N, FA2_ACCUMULATE, 1, d, I0, I1, I2, I3, I4, I5);        \
    }                                                                                        \
  };

FA2_DEFINE_WGMMA(32, 16, 17, 18, 19, 20, 21)
FA2_DEFINE_WGMMA(64, 32, 33, 34, 35, 36, 37)
FA2_DEFINE_WGMMA(80, 40, 41, 42, 43, 44, 45)
FA2_DEFINE_WGMMA(128, 64, 65, 66, 67, 68, 69)
FA2_DEFINE_WGMMA(192, 96, 97, 98, 99, 100, 101)
FA2_DEFINE_WGMMA(256, 128, 129, 130, 131, 132, 133)

#undef FA2_DEFINE_WGMMA
#undef FA2_FOR_TYPE
#undef FA2_WGMMA_RS
#undef FA2_WGMMA_SS
#undef FA2_OVERWRITE
#undef FA2_ACCUMULATE
#undef FA2_ACC_N32
#undef FA2_ACC_N64
#undef FA2_ACC_N80
#undef FA2_ACC_N128
#undef FA2_ACC_N192
#undef FA2_ACC_N256
#undef FA2_REGS_N32
#undef FA2_REGS_N64
#undef FA2_REGS_N80
#undef FA2_REGS_N128
#undef FA2_REGS_N192
#undef FA2_REGS_N256
#undef FA2_ACC8
#undef FA2_REGS_0
#undef FA2_REGS_8
#undef FA2_REGS_16
#undef FA2_REGS_24
#undef FA2_REGS_32
#undef FA2_REGS_40
#undef FA2_REGS_48
#undef FA2_REGS_56
#undef FA2_REGS_64
#undef FA2_REGS_72
#undef FA2_REGS_80
#undef FA2_REGS_88
#undef FA2_REGS_96
#undef FA2_REGS_104
#undef FA2_REGS_112
#undef FA2_REGS_120

// The k-loops every kernel runs, kSteps k-steps of 16 (the caller fences
// before and commits after). Operands sit in 128-byte-swizzled tiles of
// `rows` rows (hopper_ops.cuh); transposed means MN-major.
//   D = A B     both from shared memory; the first step overwrites D
//               (kAccumulate: D += A B)
//   D += A B    A from registers (one packed fragment per k-step), B MN-major
//               (kTransB 0: K-major; !kAccumulate: D = A B)
template <class T, int N, int kSteps, int kTransA = 0, int kTransB = 0, bool kAccumulate = false>
__device__ inline void wgmma_chain_ss(float (&d)[N / 2], uint32_t a, int a_rows, uint32_t b,
                                      int b_rows) {
  if constexpr (kAccumulate)
    Wgmma<N>::template ss<T, kTransA, kTransB>(d, desc_of_major(kTransA, a, a_rows, 0),
                                               desc_of_major(kTransB, b, b_rows, 0));
  else
    Wgmma<N>::template ss_overwrite<T, kTransA, kTransB>(d, desc_of_major(kTransA, a, a_rows, 0),
                                                         desc_of_major(kTransB, b, b_rows, 0));
#pragma unroll
  for (int kk = 1; kk < kSteps; ++kk)
    Wgmma<N>::template ss<T, kTransA, kTransB>(d, desc_of_major(kTransA, a, a_rows, kk),
                                               desc_of_major(kTransB, b, b_rows, kk));
}
template <class T, int N, int kSteps, int kTransB = 1, bool kAccumulate = true>
__device__ inline void wgmma_chain_rs(float (&d)[N / 2], const uint32_t (&a)[kSteps][4],
                                      uint32_t b, int b_rows) {
  auto desc = [&](int kk) { return desc_of_major(kTransB, b, b_rows, kk); };
  if constexpr (kAccumulate)
    Wgmma<N>::template rs<T, kTransB>(d, a[0], desc(0));
  else
    Wgmma<N>::template rs_overwrite<T, kTransB>(d, a[0], desc(0));
#pragma unroll
  for (int kk = 1; kk < kSteps; ++kk) Wgmma<N>::template rs<T, kTransB>(d, a[kk], desc(kk));
}

// A warpgroup's A operand in registers, one packed fragment per k-step
// (Wgmma::rs), from a K-major 128-byte-swizzled tile whose 64 rows start at
// `tile` (chunks `rows` rows apart): lane l gives ldmatrix the address of
// row 16 warp + l % 16, k-step columns 8 (l / 16) on. (The address is
// SwizzledBoxes<rows, 16 kSteps>::addr's; through that helper ptxas laid the
// d128 forward's main loop out in another order, 0.865 similar, 2026-12-07.)
template <int kSteps>
__device__ inline void load_a_k_major(uint32_t (&a)[kSteps][4], uint32_t tile, int rows, int warp,
                                      int lane) {
  const int row = 16 * warp + lane % 16;
#pragma unroll
  for (int kk = 0; kk < kSteps; ++kk) {
    const int unit = 2 * (kk % 4) + lane / 16;  // 16-byte unit within the 128-byte row
    ldmatrix_x4(a[kk], tile + ((kk / 4) * rows + row) * kSwizzleRowBytes + (unit ^ (row % 8)) * 16);
  }
}

}  // namespace fa2::cuda::sm90

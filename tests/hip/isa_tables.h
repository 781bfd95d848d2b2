// The MFMA instructions the HIP kernels use, as AMD documents them, for the
// host tests: written from the ISA guides' tables, independently of
// backends/hip/mfma_traits.h, so that the tests check the traits.
//
// Sources: "AMD Instinct MI200 Instruction Set Architecture Reference
// Guide" (CDNA2), chapter 7 "Matrix Arithmetic Instructions", and the "AMD
// Instinct MI300 (CDNA3) Instruction Set Architecture Reference Guide",
// chapter 7, whose register layouts for these instructions are the same;
// the tables of AMD's amd_matrix_instruction_calculator
// (--detail-instruction) state them per lane and register:
//   v_mfma_f32_32x32x8{f16,bf16_1k}:
//     A[i][k] in lane i + 32 * (k / 4), item k % 4
//     B[k][j] in lane j + 32 * (k / 4), item k % 4
//     D[i][j] in lane j + 32 * ((i / 4) % 2), register 4 * (i / 8) + i % 4
//   v_mfma_f32_16x16x16{f16,bf16_1k}:
//     A[i][k] in lane i + 16 * (k / 4), item k % 4
//     B[k][j] in lane j + 16 * (k / 4), item k % 4
//     D[i][j] in lane j + 16 * (i / 4), register i % 4
#pragma once

namespace fa2::hip::isa {

inline constexpr int kLanes = 64;
inline constexpr int kItems = 4;  // 16-bit values per lane in A and B

// Where the ISA tables put an element: (lane, item or register).
struct Slot {
  int lane, item;
};

struct IsaTable {
  int m, k;  // square m x m output, depth k
  Slot (*a)(int i, int k);
  Slot (*b)(int k, int j);
  Slot (*d)(int i, int j);
};

inline const IsaTable kIsa32x32x8{
    32, 8, [](int i, int k) { return Slot{i + 32 * (k / 4), k % 4}; },
    [](int k, int j) { return Slot{j + 32 * (k / 4), k % 4}; },
    [](int i, int j) { return Slot{j + 32 * ((i / 4) % 2), 4 * (i / 8) + i % 4}; }};
inline const IsaTable kIsa16x16x16{
    16, 16, [](int i, int k) { return Slot{i + 16 * (k / 4), k % 4}; },
    [](int k, int j) { return Slot{j + 16 * (k / 4), k % 4}; },
    [](int i, int j) { return Slot{j + 16 * (i / 4), i % 4}; }};

// The table of the M x M x K instruction.
inline const IsaTable &table(int m) { return m == 32 ? kIsa32x32x8 : kIsa16x16x16; }

}  // namespace fa2::hip::isa

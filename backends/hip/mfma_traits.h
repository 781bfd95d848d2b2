// Wave64 MFMA lane layouts, as constexpr traits shared by the kernels and
// by the host unit test (tests/hip/), which checks them against a
// lane-level emulation of the instructions. Plain C++: no HIP header.
//
// Source of the layouts: "AMD Instinct MI200 Instruction Set Architecture
// Reference Guide" (CDNA2, 2022), chapter 7 "Matrix Arithmetic
// Instructions", and "CDNA3 Instruction Set Architecture Reference Guide"
// (2023), chapter 7, which keep the same register layouts for the
// v_mfma_f32_{32x32x8,16x16x16}{f16,bf16_1k} instructions; AMD's
// amd_matrix_instruction_calculator prints the same tables.
//
// For an instruction D(MxN) = A(MxK) * B(KxN) + C with one block and
// kOperandElems packed 16-bit values per lane in A and B:
//   A[i][k]: lane i + M * (k / kOperandElems), element k % kOperandElems
//   B[k][j]: lane j + N * (k / kOperandElems), element k % kOperandElems
//   C[i][j]: lane j + N * ((i / kOperandElems) % kLaneGroups),
//            register (i % kOperandElems) + kOperandElems * (i / (kOperandElems * kLaneGroups))
// where kLaneGroups = kWaveSize / N lanes hold one column of C.
#pragma once

#include "core/portability.h"

namespace fa2::hip {

template <int M, int K>
struct MfmaLayout {
  static constexpr int kWaveSize = 64;     // CDNA wavefront
  static constexpr int kM = M;             // rows of A and C
  static constexpr int kN = M;             // columns of B and C (square tiles)
  static constexpr int kK = K;             // reduction depth of one instruction
  static constexpr int kOperandElems = 4;  // 16-bit A / B values per lane
  static constexpr int kLaneGroups = kWaveSize / kN;
  static constexpr int kAccRegs = kM * kN / kWaveSize;  // fp32 C values per lane
  static_assert(kLaneGroups * kOperandElems == kK, "one instruction covers K exactly");

  // A operand: which row / k a lane's element e holds.
  FA2_INLINE static constexpr int a_row(int lane) { return lane % kM; }
  FA2_INLINE static constexpr int a_k(int lane, int e) { return (lane / kM) * kOperandElems + e; }
  // B operand: which column / k.
  FA2_INLINE static constexpr int b_col(int lane) { return lane % kN; }
  FA2_INLINE static constexpr int b_k(int lane, int e) { return (lane / kN) * kOperandElems + e; }
  // Accumulator: every register of a lane lies in one column.
  FA2_INLINE static constexpr int c_col(int lane) { return lane % kN; }
  FA2_INLINE static constexpr int c_row(int lane, int reg) {
    return (reg / kOperandElems) * (kOperandElems * kLaneGroups) + (lane / kN) * kOperandElems +
           reg % kOperandElems;
  }

  // The lanes that share one accumulator column are lane ^ (kN * 2^s):
  // a butterfly over these offsets reduces a column (a softmax row, since
  // the kernels compute transposed score tiles).
  static constexpr int kReduceSteps = kLaneGroups == 1 ? 0 : kLaneGroups == 2 ? 1 : 2;
  static_assert((1 << kReduceSteps) == kLaneGroups, "lane groups are a power of two <= 4");
  FA2_INLINE static constexpr int reduce_offset(int step) { return kN << step; }

  // A column of C, read down its registers in k-steps of the next
  // instruction, is already a B operand: register kOperandElems * s + e of
  // lane l holds row kK * s + b_k(l, e). This is what lets P = softmax(S^T)
  // feed the P*V product without leaving registers.
  static constexpr int kKStepsPerAcc = kAccRegs / kOperandElems;
};

// The two instructions the kernels are written for.
using Mfma32x32x8 = MfmaLayout<32, 8>;    // v_mfma_f32_32x32x8{f16,bf16_1k}
using Mfma16x16x16 = MfmaLayout<16, 16>;  // v_mfma_f32_16x16x16{f16,bf16_1k}

}  // namespace fa2::hip

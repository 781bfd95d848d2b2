// Device-side building blocks over the layouts of mfma_traits.h: the
// element policies (f16 / bf16 storage, conversions, the MFMA builtin of
// each) and the cross-lane column reduction the online softmax uses.
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>

#include "core/numeric.h"
#include "core/online_softmax.h"
#include "core/params.h"
#include "mfma_traits.h"

namespace fa2::hip {

// The packed 16-bit values of one lane's A or B operand (the same count
// for both layouts), as raw bits and as each builtin's operand type.
inline constexpr int kOperandElems = Mfma32x32x8::kOperandElems;
static_assert(Mfma16x16x16::kOperandElems == kOperandElems, "one operand type for both layouts");
using Bits4 = uint16_t __attribute__((ext_vector_type(kOperandElems)));
using Half4 = _Float16 __attribute__((ext_vector_type(kOperandElems)));
using Short4 = short __attribute__((ext_vector_type(kOperandElems)));
using Acc32 = float __attribute__((ext_vector_type(Mfma32x32x8::kAccRegs)));
using Acc16 = float __attribute__((ext_vector_type(Mfma16x16x16::kAccRegs)));

template <class Layout>
struct AccOf;
template <>
struct AccOf<Mfma32x32x8> {
  using type = Acc32;
};
template <>
struct AccOf<Mfma16x16x16> {
  using type = Acc16;
};

// The element type of one dtype, and its MFMA for each layout.
struct F16 {
  __device__ static uint16_t from_float(float x) {
    return __builtin_bit_cast(uint16_t, static_cast<_Float16>(x));
  }
  __device__ static float to_float(uint16_t h) {
    return static_cast<float>(__builtin_bit_cast(_Float16, h));
  }
  __device__ static Acc32 mfma(Mfma32x32x8, Bits4 a, Bits4 b, Acc32 c) {
    return __builtin_amdgcn_mfma_f32_32x32x8f16(__builtin_bit_cast(Half4, a),
                                                __builtin_bit_cast(Half4, b), c, 0, 0, 0);
  }
  __device__ static Acc16 mfma(Mfma16x16x16, Bits4 a, Bits4 b, Acc16 c) {
    return __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(Half4, a),
                                                 __builtin_bit_cast(Half4, b), c, 0, 0, 0);
  }
};

struct BF16 {
  __device__ static uint16_t from_float(float x) { return core::float_to_bf16(x); }
  __device__ static float to_float(uint16_t h) { return core::bf16_to_float(h); }
  __device__ static Acc32 mfma(Mfma32x32x8, Bits4 a, Bits4 b, Acc32 c) {
    return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(__builtin_bit_cast(Short4, a),
                                                    __builtin_bit_cast(Short4, b), c, 0, 0, 0);
  }
  __device__ static Acc16 mfma(Mfma16x16x16, Bits4 a, Bits4 b, Acc16 c) {
    return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(Short4, a),
                                                     __builtin_bit_cast(Short4, b), c, 0, 0, 0);
  }
};

template <core::Dtype>
struct ElemOf;
template <>
struct ElemOf<core::Dtype::f16> {
  using type = F16;
};
template <>
struct ElemOf<core::Dtype::bf16> {
  using type = BF16;
};

// RowReduce for core::online_softmax_*: combines the lanes that hold the
// same accumulator column (the butterfly offsets of the layout).
template <class Layout>
struct ColumnReduce {
  __device__ float max(float x) const {
    FA2_UNROLL
    for (int s = 0; s < Layout::kReduceSteps; ++s)
      x = core::fmax_f(x, __shfl_xor(x, Layout::reduce_offset(s), Layout::kWaveSize));
    return x;
  }
  __device__ float sum(float x) const {
    FA2_UNROLL
    for (int s = 0; s < Layout::kReduceSteps; ++s)
      x += __shfl_xor(x, Layout::reduce_offset(s), Layout::kWaveSize);
    return x;
  }
};

// Four consecutive 16-bit values at `p` (8-byte aligned), or zeros.
__device__ inline Bits4 load4(const uint16_t *p, bool inside) {
  return inside ? *reinterpret_cast<const Bits4 *>(p) : Bits4{0, 0, 0, 0};
}

}  // namespace fa2::hip

// What every Kokkos kernel shares: the dtype policies, float tiles in team
// scratch memory, and the team-parallel copy of operand rows into a tile.
// Operands stay where the caller put them: rows are addressed through the
// AttnParams strides (core::row_offset), never copied into a packed layout.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "core/numeric.h"
#include "core/params.h"
#include "core/work.h"

namespace fa2::kokkos {

// How one dtype sits in memory; every tile holds float.
struct F16 {
  using Storage = uint16_t;
  KOKKOS_INLINE_FUNCTION static float load(Storage x) { return core::f16_to_float(x); }
  KOKKOS_INLINE_FUNCTION static Storage store(float x) { return core::float_to_f16(x); }
};
struct BF16 {
  using Storage = uint16_t;
  KOKKOS_INLINE_FUNCTION static float load(Storage x) { return core::bf16_to_float(x); }
  KOKKOS_INLINE_FUNCTION static Storage store(float x) { return core::float_to_bf16(x); }
};
struct F32 {
  using Storage = float;
  KOKKOS_INLINE_FUNCTION static float load(Storage x) { return x; }
  KOKKOS_INLINE_FUNCTION static Storage store(float x) { return x; }
};

using Exec = Kokkos::DefaultExecutionSpace;
using TeamPolicy = Kokkos::TeamPolicy<Exec>;
using Member = TeamPolicy::member_type;
using ScratchSpace = Exec::scratch_memory_space;
using Tile = Kokkos::View<float **, Kokkos::LayoutRight, ScratchSpace, Kokkos::MemoryUnmanaged>;
using TileRow = Kokkos::View<float *, ScratchSpace, Kokkos::MemoryUnmanaged>;

// Pointer to element 0 of row `row` of sequence `seq_row0`, head `head`.
template <class Pointer>
KOKKOS_INLINE_FUNCTION Pointer row_ptr(const core::TensorRef &t, int batch, int64_t seq_row0,
                                       int row, int head) {
  return static_cast<Pointer>(t.data) + core::row_offset(t, batch, seq_row0, row, head);
}

// Rows [row0, row0 + rows) of one head into tile rows [0, rows), as float;
// tile rows [rows, padded_rows) become 0 so that a full-width loop over
// them reads finite values.
template <class Elem>
KOKKOS_INLINE_FUNCTION void load_tile(const Member &team, const Tile &tile,
                                      const core::TensorRef &t, int batch, int64_t seq_row0,
                                      int row0, int rows, int padded_rows, int head,
                                      int head_dim) {
  using Storage = typename Elem::Storage;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, padded_rows), [&](int r) {
    if (r < rows) {
      const Storage *src = row_ptr<const Storage *>(t, batch, seq_row0, row0 + r, head);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, head_dim),
                           [&](int d) { tile(r, d) = Elem::load(src[d]); });
    } else {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, head_dim),
                           [&](int d) { tile(r, d) = 0.f; });
    }
  });
}

// The scratch level a team gets: the fast one (GPU shared memory) when the
// tiles fit in it, else level 1 (device memory on a GPU, host memory on a CPU).
inline int scratch_level_for(size_t bytes) {
  const TeamPolicy probe(1, 1);
  return bytes <= size_t(probe.scratch_size_max(0)) ? 0 : 1;
}

// One team per league entry: Kokkos picks the team size; vector lanes split
// the head dim or the key columns.
inline TeamPolicy team_policy(int league, int scratch_level, size_t scratch_bytes) {
  constexpr int kVectorLength = 16;
  const int vector_length =
      kVectorLength < TeamPolicy::vector_length_max() ? kVectorLength : TeamPolicy::vector_length_max();
  TeamPolicy policy(league, Kokkos::AUTO, vector_length);
  return policy.set_scratch_size(scratch_level, Kokkos::PerTeam(scratch_bytes));
}

}  // namespace fa2::kokkos

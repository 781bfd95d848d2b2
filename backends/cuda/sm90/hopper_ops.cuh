// The Hopper vocabulary (sm_90a): mbarriers, bulk tensor copies (TMA),
// warpgroup MMA bookkeeping, shared-memory matrix descriptors and register
// reallocation. Everything here is one PTX instruction (or a wait loop
// around one); the instruction shapes themselves are in wgmma.cuh.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "sm90/tensor_map.h"

namespace fa2::cuda::sm90 {

// ---- mbarrier: completion of TMA loads (transaction bytes) and release of
// shared-memory stages (arrivals).
__device__ inline void mbar_init(uint32_t bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals));
}
// Makes the initialised barriers visible to the async proxy (the TMA unit).
__device__ inline void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` of incoming TMA data.
__device__ inline void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ inline void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase with this parity has completed. A freshly
// initialised barrier is in phase 0, so waiting on parity 1 returns at
// once: that is how a producer passes its first round of empty stages.
__device__ inline void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// ---- Thread-block clusters: a CTA reaches its partner's shared memory
// through shared::cluster addresses (mapa of its own address of the same
// variable). Only arrivals and bulk copies go to the partner; waits stay local.
__device__ inline uint32_t cluster_rank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}
__device__ inline uint32_t cluster_address(uint32_t smem, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem), "r"(rank));
  return remote;
}
// Every thread of both CTAs: what each did before is visible to the other after.
__device__ inline void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
}
// Relaxed: what it orders here are asynchronous reads (wgmma) that a wait
// has already completed; a release at cluster scope would also wait for
// every atomic still in flight (ERRBAR in the SASS, the largest stall).
__device__ inline void mbar_arrive_remote(uint32_t cluster_bar) {
  asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_bar)
               : "memory");
}
// `bytes` of this CTA's shared memory into the partner's, completing on the
// partner's barrier (both cluster addresses); tracked by this thread's bulk
// groups like the reduce-adds below.
__device__ inline void bulk_copy_to_cluster(uint32_t cluster_dst, uint32_t src, uint32_t bytes,
                                            uint32_t cluster_bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, "
      "[%3];\n" ::"r"(cluster_dst),
      "r"(src), "r"(bytes), "r"(cluster_bar)
      : "memory");
}

// ---- TMA: one box of a 4-D tensor map into shared memory, completing
// on `bar`. Out-of-bounds elements arrive as zeros (and still count as
// transaction bytes).
__device__ inline void tma_load_4d(uint32_t dst, const CUtensorMap &map, uint32_t bar, int c0,
                                   int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}
// The same through maps[index], the address formed inside the asm: a
// varlen call's per-sequence maps (TmaMaps::sequences) from the producers'
// loops, which run on 24 registers (with 64-bit map addresses formed
// outside, ptxas kept several live and spilled).
__device__ inline void tma_load_4d(uint32_t dst, const CUtensorMap *maps, uint32_t index,
                                   uint32_t bar, int c0, int c1, int c2, int c3) {
  asm volatile(
      "{\n .reg .u64 map;\n mad.wide.u32 map, %1, 128, %2;\n"
      " cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [map, {%3, %4, %5, %6}], [%7];\n}\n" ::"r"(dst),
      "r"(index), "l"(reinterpret_cast<uint64_t>(maps)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
      "r"(bar)
      : "memory");
}
// Box (col, row, head) of operand kOp (SeqOperand) of batch entry `batch`:
// through the call's map at that batch coordinate or, kPerSequence (the
// call is varlen: maps.sequences is set), through the entry's own map at
// batch coordinate 0. Kernels instantiated per kind pass kPerSequence (the
// backward); the form without it tests maps.sequences per load (the
// forward). Varlen: the maps were written by an earlier kernel, perhaps
// where an earlier call's maps lay, so a producer acquires its entry's
// (acquire_sequence_maps) first.
template <int kOp, bool kPerSequence>
__device__ inline void tma_load_operand(const TmaMaps &maps, int batch, uint32_t dst,
                                        uint32_t bar, int col, int row, int head) {
  static_assert(sizeof(CUtensorMap) == 128, "tma_load_4d's map stride");
  if constexpr (kPerSequence) {
    tma_load_4d(dst, maps.sequences, uint32_t(kSeqOperands * batch + kOp), bar, col, row, head, 0);
  } else {
    const CUtensorMap &map = kOp == kSeqQ   ? maps.q
                             : kOp == kSeqK ? maps.k
                             : kOp == kSeqV ? maps.v
                                            : maps.dout;
    tma_load_4d(dst, map, bar, col, row, head, batch);
  }
}
template <int kOp>
__device__ inline void tma_load_operand(const TmaMaps &maps, int batch, uint32_t dst,
                                        uint32_t bar, int col, int row, int head) {
  if (maps.sequences != nullptr)
    tma_load_operand<kOp, true>(maps, batch, dst, bar, col, row, head);
  else
    tma_load_operand<kOp, false>(maps, batch, dst, bar, col, row, head);
}
// `bytes` (a multiple of 16; both addresses 16-byte aligned) from global
// into shared memory, completing on `bar`.
__device__ inline void bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
      ::"r"(dst), "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}
// shared -> global element-wise add of one box (fp32 here), asynchronous,
// tracked by bulk groups of the issuing thread; out-of-bounds parts of the
// box are skipped.
__device__ inline void tma_reduce_add_4d(const CUtensorMap &map, uint32_t src, int c0, int c1,
                                         int c2, int c3) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group"
      " [%0, {%1, %2, %3, %4}], [%5];\n" ::"l"(reinterpret_cast<uint64_t>(&map)),
      "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
      : "memory");
}
// shared -> global copy of one box, tracked by bulk groups as the reduction
// above; out-of-bounds parts of the box are not written.
__device__ inline void tma_store_4d(const CUtensorMap &map, uint32_t src, int c0, int c1, int c2,
                                    int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group"
      " [%0, {%1, %2, %3, %4}], [%5];\n" ::"l"(reinterpret_cast<uint64_t>(&map)),
      "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
      : "memory");
}
__device__ inline void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Returns once this thread's bulk operations have finished reading shared
// memory (bulk_wait_read) or have completed altogether (bulk_wait).
__device__ inline void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
__device__ inline void bulk_wait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
__device__ inline void tma_prefetch_map(const CUtensorMap &map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map)) : "memory");
}

// ---- Tensor maps written on the device (varlen). A map copied from a
// host-encoded one gets a new base address and row count; writes through
// the generic proxy reach the TMA's reads (the tensormap proxy) through a
// release by the writer and an acquire of the map by the reader.
__device__ inline void map_replace_address(CUtensorMap *map, const void *base) {
  asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;\n" ::"l"(
                   __cvta_generic_to_global(map)),
               "l"(reinterpret_cast<uint64_t>(base))
               : "memory");
}
// Dimension 1 of the map: its rows (dimension 0 is the head dim).
__device__ inline void map_replace_rows(CUtensorMap *map, int rows) {
  asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 1, %1;\n" ::"l"(
                   __cvta_generic_to_global(map)),
               "r"(rows)
               : "memory");
}
__device__ inline void proxy_release_maps() {
  asm volatile("fence.proxy.tensormap::generic.release.gpu;\n" ::: "memory");
}
__device__ inline void proxy_acquire_map(const CUtensorMap *map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n" ::"l"(
                   reinterpret_cast<uint64_t>(map))
               : "memory");
}
// The first `operands` of SeqOperand's maps of batch entry `batch`.
__device__ inline void acquire_sequence_maps(const TmaMaps &maps, int batch, int operands) {
  if (maps.sequences == nullptr) return;
  for (int op = 0; op < operands; ++op)
    proxy_acquire_map(maps.sequences + kSeqOperands * batch + op);
}

// ---- wgmma bookkeeping. fence before the first MMA that touches registers
// written by ordinary instructions; commit closes a group of issued MMAs;
// wait<N> returns once at most N groups are still running.
__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ inline void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// The compiler sees an asynchronous MMA's accumulators as written when the
// instruction is issued. Touching each register in an empty volatile asm
// after wgmma_wait pins every later use of it below the wait.
template <int N>
__device__ inline void pin_registers(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N, int M>
__device__ inline void pin_registers(uint32_t (&r)[N][M]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int j = 0; j < M; ++j) asm volatile("" : "+r"(r[i][j])::"memory");
}
// The first N elements of an array, as an array: a GEMM or a softmax over
// the leading columns of a tile's accumulators.
template <int N, class E, int M>
__device__ inline E (&leading(E (&a)[M]))[N] {
  static_assert(N <= M, "more elements than the array has");
  return reinterpret_cast<E(&)[N]>(a);
}

// ---- Ordering between the consumer warpgroups, and between their ordinary
// shared-memory stores and the tensor cores (the async proxy) that read
// what they stored.
__device__ inline void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ inline void st_shared_v2_f32(uint32_t smem, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(smem), "f"(x), "f"(y) : "memory");
}
// ptxas hoists a wgmma wait above ordinary instructions that do not need
// it (SASS, 2026-11-29: the forward's wait for P V landed above the softmax
// of the next S). It keeps a shared-memory store above the wait, and with
// it everything the stored value depends on.
__device__ inline void hold_above_wait(uint32_t smem_slot, float x) {
  asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(smem_slot), "f"(x) : "memory");
}
__device__ inline void fence_smem_to_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Orders the async proxy's global writes that this thread waited for (its
// TMA reduce-adds) before its own later generic accesses (a release).
__device__ inline void fence_async_to_global() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

// ---- A value the warp shares, broadcast from lane 0: the compiler then
// knows it is the same across the warp and keeps what derives from it
// (shared addresses, wgmma descriptors, loop bounds) in uniform registers.
// From threadIdx.x / 128 it built every descriptor in ordinary registers
// and moved it over per wgmma (SASS, 2026-11-30); from a tile read out of
// shared memory, the forward's loop grew by 4% (2026-12-03).
__device__ inline int warp_uniform(int value) { return __shfl_sync(0xffffffffu, value, 0); }
__device__ inline int warpgroup_index() { return warp_uniform(int(threadIdx.x) / 128); }

// ---- Register reallocation between warpgroups (needs a register cap at
// entry: __launch_bounds__(threads, 1)). setmaxnreg.inc waits until the
// registers exist, so a split of one producer warpgroup and `consumers`
// consumer warpgroups must fit what the launch allocated: 65536 / threads
// per thread, rounded down to 8.
constexpr bool register_split_fits(int threads, int producer_regs, int consumers,
                                   int consumer_regs) {
  return 128 * (producer_regs + consumers * consumer_regs) <= 65536 / threads / 8 * 8 * threads;
}
template <int kRegs>
__device__ inline void regs_release() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ inline void regs_claim() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// ---- Shared-memory matrix descriptors for the 128-byte swizzle that the
// TMA writes (CU_TENSOR_MAP_SWIZZLE_128B): rows of 64 b16 elements
// (128 bytes), 16-byte chunks XOR-ed with row % 8, in 8-row atoms of
// 1024 bytes; tiles start 1024-byte aligned. A tile of R rows and 64*c
// columns is stored as c column chunks of R x 128 bytes.
//
// Bits: [0,14) start >> 4, [16,30) leading byte offset >> 4,
// [32,46) stride byte offset >> 4, [62,64) swizzle (1 = 128 B).
// The start field keeps the CTA-local offset (in the 2-CTA cluster kernel
// shared addresses have bits above 18 set: unmasked, they landed in the
// leading offset, and dK / dV came out wrong). Offsets are below 2^18, so the
// field never overflows: a descriptor moves by `bytes` by adding bytes >> 4,
// and a k loop's descriptors are one base plus constants. (Masking and
// shifting every k-step's address took ~6 instructions per descriptor, a third
// of the backward consumer's instructions, SASS 2026-11-30.)
// The two halves are built apart (the high one is a constant) so that a
// move is one 32-bit add.
__device__ inline uint64_t desc_of(uint32_t lo, uint32_t hi) {
  uint64_t desc;
  asm("mov.b64 %0, {%1, %2};\n" : "=l"(desc) : "r"(lo), "r"(hi));
  return desc;
}
__device__ inline uint64_t smem_desc(uint32_t start, uint32_t leading_bytes,
                                     uint32_t stride_bytes, uint32_t moved_bytes) {
  return desc_of((((start & 0x3FFFFu) >> 4) | (leading_bytes >> 4) << 16) + (moved_bytes >> 4),
                 (stride_bytes >> 4) | 1u << 30);
}
inline constexpr uint32_t kSwizzleRowBytes = 128;
inline constexpr uint32_t kSwizzleAtomBytes = 8 * kSwizzleRowBytes;

// K-major operand (the reduction dimension is contiguous: Q and K for
// Q K^T): k-step kk of 16 elements is chunk kk / 4, 32 bytes in. The
// leading offset is unused in this mode; the stride offset steps 8 rows.
__device__ inline uint64_t desc_k_major(uint32_t tile, int rows, int kk) {
  return smem_desc(tile, 16, kSwizzleAtomBytes, (kk / 4) * rows * kSwizzleRowBytes + (kk % 4) * 32);
}
// MN-major operand (the output dimension is contiguous: V for P V, read
// transposed): k-step kk is rows 16 kk.. of every chunk; the leading offset
// steps from one 64-column chunk of N to the next, the stride offset 8 rows
// of K.
__device__ inline uint64_t desc_mn_major(uint32_t tile, int rows, int kk) {
  return smem_desc(tile, rows * kSwizzleRowBytes, kSwizzleAtomBytes, kk * 16 * kSwizzleRowBytes);
}
__device__ inline uint64_t desc_of_major(bool mn_major, uint32_t tile, int rows, int kk) {
  return mn_major ? desc_mn_major(tile, rows, kk) : desc_k_major(tile, rows, kk);
}

}  // namespace fa2::cuda::sm90

// The end of an integer-kernel block (gpu/me_cuda_kernel.cuh): each partition's 3 sorted lists merged into its top K,
// decoded to candidates and written out; the two blocks of a split macroblock (gpu/cost_order.h) meet first.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/exp_golomb.h"
#include "gpu/integer_block.cuh"

namespace gme {
namespace {

// A key decoded back to (mv, SAD): the spiral index gives the vector (offsets: the order table's inverse of the
// spiral), the recomputed penalty the SAD.
__device__ __forceinline__ uint2 decode_key(uint64_t key, const Macroblock& m, int lambda, const uint32_t* offsets) {
  const uint32_t off = __ldg(offsets + static_cast<uint32_t>(key & ((1u << kSpiralBits) - 1)));
  const int mvx = m.centre.x + static_cast<int16_t>(off & 0xffffu);
  const int mvy = m.centre.y + static_cast<int16_t>(off >> 16);
  const uint64_t pen =
      static_cast<uint64_t>(lambda) * static_cast<uint64_t>(se_bits(mvx - m.pred.x) + se_bits(mvy - m.pred.y));
  const uint32_t sad = static_cast<uint32_t>(((key >> kSpiralBits) - pen) >> kLambdaBits);
  return make_uint2((static_cast<uint32_t>(mvx) & 0xffffu) | (static_cast<uint32_t>(mvy) << 16), sad);
}

// Each of the 123 list threads places its own keys: the rank of its i-th key in the partition's union is i plus the
// keys below it in the two other lists (counted), and a key of rank under K is the partition's rank-th; place(rank,
// key) puts it. Keys are unique, so ranks are. An unfilled entry (kEmptyKey) ranks K or more where the partition
// has K positions or more, as a whole window has; a split window's half may have fewer, and then its unfilled
// entries take the ranks from its count of positions on, some twice (the same kEmptyKey).
template <int K, typename Place>
__device__ __forceinline__ void rank_lists(const uint64_t (&best)[K], const uint64_t* s_merge, int part, int slice,
                                           Place&& place) {
  const uint64_t* o1 = s_merge + (part * kSlices + (slice + 1) % kSlices) * K;
  const uint64_t* o2 = s_merge + (part * kSlices + (slice + 2) % kSlices) * K;
  // The other lists' keys in registers, loaded at once, and each rank counted by independent compares: a two-pointer
  // walk through shared memory waits for one load per step, at the end of every block.
  uint64_t r1[K], r2[K];
GME_UNROLL
  for (int j = 0; j < K; ++j) {
    r1[j] = o1[j];
    r2[j] = o2[j];
  }
GME_UNROLL
  for (int i = 0; i < K; ++i) {
    const uint64_t key = best[i];
    int rank = i;
GME_UNROLL
    for (int j = 0; j < K; ++j) rank += (r1[j] < key ? 1 : 0) + (r2[j] < key ? 1 : 0);
    if (rank >= K) break;  // and so are the later keys of this list
    place(rank, key);
  }
}

// A whole window's candidates: each partition's top K decoded to s_out.
template <int K>
__device__ __forceinline__ void merge_lists(const uint64_t (&best)[K], const uint64_t* s_merge, uint2* s_out, int part,
                                            int slice, const Macroblock& m, int lambda, const uint32_t* offsets) {
  rank_lists<K>(best, s_merge, part, slice,
                [&](int rank, uint64_t key) { s_out[part * K + rank] = decode_key(key, m, lambda, offsets); });
}

// A split window's half: each partition's top K keys of the half to s_keys, for meet_halves.
template <int K>
__device__ __forceinline__ void rank_half(const uint64_t (&best)[K], const uint64_t* s_merge, uint64_t* s_keys,
                                          int part, int slice) {
  rank_lists<K>(best, s_merge, part, slice, [&](int rank, uint64_t key) { s_keys[part * K + rank] = key; });
}

// The two blocks of a split macroblock meet (blocks 2j and 2j + 1 of the launch, pair j): each leaves its half's keys
// (s_keys, kNumPartitions x K) in device memory and its cycles, and counts its arrival; the first to arrive is done
// (false), the second (true) takes the other's keys to s_theirs and merges both halves' into each partition's top K,
// decoded to s_out, and writes the macroblock's cost, both halves' cycles. A pair arrives twice a call, so the count's
// parity says which block is the second whatever the count was. s_flag: a shared word. The halves hold disjoint
// positions, so the top K of their two top K's is the window's. The ranks are counted from shared memory, not
// registers: the kernel's registers are spoken for by the batches' loop.
template <int K>
__device__ __forceinline__ bool meet_halves(const KernelArgs& a, const Macroblock& m, int half, const uint64_t* s_keys,
                                            uint64_t* s_theirs, uint2* s_out, uint32_t* s_flag, uint32_t cycles,
                                            int tid) {
  constexpr int kKeys = kNumPartitions * K;
  const int pair = static_cast<int>(blockIdx.x) >> 1;
  uint64_t* mine = a.split_keys + static_cast<size_t>(2 * pair + half) * kKeys;
  const uint64_t* theirs = a.split_keys + static_cast<size_t>(2 * pair + (half ^ 1)) * kKeys;
  uint32_t* meet = a.split_meet + kMeetWords * pair;
  for (int i = tid; i < kKeys; i += kThreads) mine[i] = s_keys[i];
  if (tid == 0) meet[1 + half] = cycles;
  __threadfence();  // the keys and cycles are visible to the other block before the arrival counts
  __syncthreads();
  if (tid == 0) *s_flag = atomicAdd(meet, 1u) & 1u;
  __syncthreads();
  if (!*s_flag) return false;  // uniform: the first to arrive
  __threadfence();
  for (int i = tid; i < kKeys; i += kThreads) s_theirs[i] = __ldcg(theirs + i);
  __syncthreads();
  if (tid < 2 * kNumPartitions) {  // thread (partition, list): list 0 this half's keys, 1 the other's
    const int part = tid >> 1;
    const uint64_t* own = (tid & 1 ? s_theirs : s_keys) + part * K;
    const uint64_t* other = (tid & 1 ? s_keys : s_theirs) + part * K;
    for (int i = 0; i < K; ++i) {
      const uint64_t key = own[i];
      int rank = i;
      for (int j = 0; j < K; ++j) rank += other[j] < key ? 1 : 0;
      if (rank >= K) break;  // and so are the later keys of this list
      s_out[part * K + rank] = decode_key(key, m, a.lambda, a.order + a.offsets_at);
    }
  }
  if (a.cost && tid == 0) {
    const uint64_t both = static_cast<uint64_t>(cycles) + __ldcg(meet + 2 - half);
    a.cost[m.index] = static_cast<uint32_t>(both < UINT32_MAX ? both : UINT32_MAX);
  }
  return true;
}

// The block's 41 x K candidates, staged in shared memory, written out together: consecutive threads write
// consecutive 16-byte pieces, so a warp store is 512 contiguous bytes (8-byte pieces K x 8 bytes apart would be
// 41 x K separate transactions, which over PCIe to a host buffer cost far more than the kernel).
template <int K>
__device__ __forceinline__ void write_out(const KernelArgs& a, const uint2* s_out, int mb, int tid) {
  const size_t first = static_cast<size_t>(mb) * kNumPartitions * K;  // this block's first candidate
  if constexpr (K % 2 == 0) {  // 41 K candidates = 41 K / 2 aligned 16-byte pieces (first is even)
    const uint4* src = reinterpret_cast<const uint4*>(s_out);
    for (int i = tid; i < kNumPartitions * K / 2; i += kThreads) {
      const uint4 v = src[i];
      reinterpret_cast<uint4*>(a.out + first)[i] = v;
      if (a.out_host) reinterpret_cast<uint4*>(a.out_host + first)[i] = v;
    }
  } else {
    for (int i = tid; i < kNumPartitions * K; i += kThreads) {
      const uint2 v = s_out[i];
      a.out[first + i] = v;
      if (a.out_host) a.out_host[first + i] = v;
    }
  }
}

}  // namespace
}  // namespace gme

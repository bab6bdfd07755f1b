// cost_order_kernel: the integer kernel's launch order from an earlier call's costs (gpu/cost_order.h, whose
// cost_order_plain is its plain version). Compiled by nvcc in gpu/me_cuda.cu and, under gpu/kernel_emu.h, by the
// tests. Include it once per translation unit.
#pragma once

#include <cstdint>

#include "gpu/cost_order.h"

namespace gme {
namespace {

constexpr int kCostOrderThreads = 256;
static_assert(kMaxSplit <= kCostOrderThreads, "one thread per spare block");

// The sum of every thread's `v` (kCostOrderThreads of them), by halving through `s_sum`; read by every thread.
__device__ __forceinline__ uint64_t block_sum(uint64_t v, uint64_t* s_sum, int tid) {
  s_sum[tid] = v;
  __syncthreads();
  for (int half = kCostOrderThreads / 2; half > 0; half /= 2) {
    if (tid < half) s_sum[tid] += s_sum[tid + half];
    __syncthreads();
  }
  const uint64_t sum = s_sum[0];
  __syncthreads();  // s_sum may be written again
  return sum;
}

// `chunks` blocks per band, each placing kCostOrderThreads of its macroblocks: the band's costs (summed over the
// references) into shared memory and, where split_windows, how many of them split (split_worthy against the whole
// picture's cycles over the `wave` blocks the GPU runs at once), then each thread ranks its macroblock among them
// (higher cost first, equal costs by number) and places its blocks (place_block, in the mixed order's runs of mix_run
// over the first `wave` blocks where mix_run is not 0); the band's first block marks the spare blocks.
// Launched with 4 bytes of shared memory per macroblock of the widest band and 8 per thread.
__global__ void __launch_bounds__(kCostOrderThreads, 1) cost_order_kernel(const uint32_t* cost, int refs,
                                                                          int num_mbs, CostOrderBands bands,
                                                                          int chunks, int wave, bool split_windows,
                                                                          int mix_run, int* table) {
  extern __shared__ __align__(16) unsigned char smem[];
  uint64_t* s_sum = reinterpret_cast<uint64_t*>(smem);
  uint32_t* s_cost = reinterpret_cast<uint32_t*>(smem + kCostOrderThreads * sizeof(uint64_t));
  const int tid = static_cast<int>(threadIdx.x);
  const int band = static_cast<int>(blockIdx.x) / chunks, chunk = static_cast<int>(blockIdx.x) - band * chunks;
  const int lo = bands.start_mb[band], n = bands.start_mb[band + 1] - lo;
  int* entries = table + lo + band * kMaxSplit;
  for (int i = tid; i < n; i += kCostOrderThreads) s_cost[i] = macroblock_cost(cost, refs, num_mbs, lo + i);
  int split = 0;
  if (split_windows) {  // uniform
    uint64_t part = 0;
    for (int i = tid; i < num_mbs; i += kCostOrderThreads) part += macroblock_cost(cost, refs, num_mbs, i);
    const uint64_t total = block_sum(part, s_sum, tid);  // its barriers also cover s_cost
    uint64_t worthy = 0;
    for (int i = tid; i < n; i += kCostOrderThreads) worthy += split_worthy(s_cost[i], total, refs, wave) ? 1 : 0;
    const uint64_t count = block_sum(worthy, s_sum, tid);
    split = static_cast<int>(count < kMaxSplit ? count : kMaxSplit);
  }
  __syncthreads();
  if (chunk == 0 && tid < kMaxSplit - split) entries[n + split + tid] = kSpareBlock;
  const int i = chunk * kCostOrderThreads + tid;
  if (i < n) {
    const uint32_t c = s_cost[i];
    int rank = 0;
    for (int j = 0; j < n; ++j) {
      const uint32_t d = s_cost[j];
      rank += d > c || (d == c && j < i);
    }
    place_block(entries, lo + i, rank, n, split, mix_run, wave);
  }
}

}  // namespace
}  // namespace gme

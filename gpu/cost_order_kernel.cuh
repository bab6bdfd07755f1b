// cost_order_kernel: the integer kernel's launch order from an earlier call's costs (gpu/cost_order.h, whose
// cost_order_plain is its plain version). Compiled by nvcc in gpu/me_cuda.cu and, under gpu/kernel_emu.h, by the
// tests. Include it once per translation unit.
#pragma once

#include <cstdint>

#include "gpu/cost_order.h"

namespace gme {
namespace {

constexpr int kCostOrderThreads = 256;

// `chunks` blocks per band, each ranking kCostOrderThreads of its macroblocks: the band's costs (summed over the
// references) into shared memory, then each thread ranks its macroblock among them (higher cost first, equal costs
// by number) and writes it to its slot. Launched with 4 bytes of shared memory per macroblock of the widest band.
__global__ void __launch_bounds__(kCostOrderThreads, 1) cost_order_kernel(const uint32_t* cost, int refs,
                                                                          int num_mbs, CostOrderBands bands,
                                                                          int chunks, int* slot_mb) {
  extern __shared__ __align__(16) unsigned char smem[];
  uint32_t* s_cost = reinterpret_cast<uint32_t*>(smem);
  const int band = static_cast<int>(blockIdx.x) / chunks, chunk = static_cast<int>(blockIdx.x) - band * chunks;
  const int lo = bands.start_mb[band], n = bands.start_mb[band + 1] - lo;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += kCostOrderThreads) {
    uint64_t sum = 0;
    for (int r = 0; r < refs; ++r) sum += cost[static_cast<size_t>(r) * num_mbs + lo + i];
    s_cost[i] = sum > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(sum);
  }
  __syncthreads();
  const int i = chunk * kCostOrderThreads + static_cast<int>(threadIdx.x);
  if (i < n) {
    const uint32_t c = s_cost[i];
    int rank = 0;
    for (int j = 0; j < n; ++j) {
      const uint32_t d = s_cost[j];
      rank += d > c || (d == c && j < i);
    }
    slot_mb[lo + rank] = lo + i;
  }
}

}  // namespace
}  // namespace gme

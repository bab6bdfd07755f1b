// The order in which the integer kernel's blocks take a launch's macroblocks: the most expensive first, by the
// clock cycles each macroblock's block took in an earlier call (doc/GPU.md, "Launch order", has the figures). The
// block scheduler starts a launch's blocks in index order; a picture of a few waves ends when its last-started long
// blocks do, so starting them first lets the short blocks fill in beside them. The candidates do not depend on the
// order (every block is on its own). cost_order_plain is the plain version of cost_order_kernel
// (gpu/cost_order_kernel.cuh), which the tests hold to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gme {

// Launches (bands) an order covers at most, and macroblocks a band may have: the kernel holds a band's costs in
// shared memory (16 KB) and ranks each macroblock against all of them (band size steps a thread). 4096 covers the
// 8 bands of pictures up to 3840x2160 (17 rows of 240 macroblocks), 2560x1600's among them; wider bands are launched
// in raster order.
constexpr int kCostOrderMaxBands = 16;
constexpr int kCostOrderMaxMbs = 4096;

// Macroblock where each band starts, and the end: the launches' runs of macroblocks.
struct CostOrderBands {
  int count = 0;
  int start_mb[kCostOrderMaxBands + 1] = {};
};

// A macroblock's cost over the references: the sum of its blocks' cycles, saturated.
inline uint32_t macroblock_cost(const uint32_t* cost, int refs, int num_mbs, int mb) {
  uint64_t sum = 0;
  for (int r = 0; r < refs; ++r) sum += cost[static_cast<size_t>(r) * num_mbs + mb];
  return sum > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(sum);
}

// slot_mb[s] for every slot of every band: the band's macroblocks by cost, highest first, equal costs by
// macroblock number.
inline std::vector<int> cost_order_plain(const uint32_t* cost, int refs, int num_mbs, const CostOrderBands& bands) {
  std::vector<int> slot_mb(static_cast<size_t>(num_mbs));
  for (int b = 0; b < bands.count; ++b) {
    const int lo = bands.start_mb[b], hi = bands.start_mb[b + 1];
    for (int i = lo; i < hi; ++i) {
      const uint32_t c = macroblock_cost(cost, refs, num_mbs, i);
      int rank = 0;
      for (int j = lo; j < hi; ++j) {
        const uint32_t d = macroblock_cost(cost, refs, num_mbs, j);
        rank += d > c || (d == c && j < i);
      }
      slot_mb[static_cast<size_t>(lo + rank)] = i;
    }
  }
  return slot_mb;
}

}  // namespace gme

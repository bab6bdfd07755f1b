// The order in which the integer kernel's blocks take a launch's macroblocks: the most expensive first, by the
// clock cycles each macroblock's block took in an earlier call (doc/GPU.md, "Launch order", has the figures). The
// block scheduler starts a launch's blocks in index order; a picture of a few waves ends when its last-started long
// blocks do, so starting them first lets the short blocks fill in beside them. The candidates do not depend on the
// order (every block is on its own). cost_order_plain is the plain version of cost_order_kernel
// (gpu/cost_order_kernel.cuh), which the tests hold to it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/host_device.h"

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
GME_HOST_DEVICE inline uint32_t macroblock_cost(const uint32_t* cost, int refs, int num_mbs, int mb) {
  uint64_t sum = 0;
  for (int r = 0; r < refs; ++r) sum += cost[static_cast<size_t>(r) * num_mbs + mb];
  return sum > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(sum);
}

// Split macroblocks. Where a macroblock's blocks take longer than what an SM slot (one of the blocks an SM runs at
// once) has to do for the whole picture on average, the picture cannot end before them however the blocks are
// ordered: a small picture then waits for its few costliest macroblocks. Their windows are searched by two blocks
// each, one half each (the integer kernel merges the halves' lists), at most kMaxSplit a band, the costliest of the
// band: those whose cost over the references exceeds kSplitNum / kSplitDen of the slots' average per reference,
// c slots kSplitDen > kSplitNum refs total. Large pictures, whose slots each take many blocks, split none.
constexpr int kMaxSplit = 32;
// Split where it pays: the lists of longer kernels take the registers the split's code needs.
constexpr int kSplitMaxTopK = 1;
GME_HOST_DEVICE constexpr bool splits_windows(int top_k) { return top_k <= kSplitMaxTopK; }
constexpr uint64_t kSplitNum = 1, kSplitDen = 1;
GME_HOST_DEVICE inline bool split_worthy(uint32_t mb_cost, uint64_t total, int refs, int slots) {
  return static_cast<uint64_t>(mb_cost) * static_cast<uint64_t>(slots) * kSplitDen >
         total * static_cast<uint64_t>(refs) * kSplitNum;
}

// The launch order is a table of the blocks of each band's launch, band_mbs + kMaxSplit entries from band b's
// start_mb[b] + b kMaxSplit (cost_order_entries): entry = macroblock | (half + 1) << kHalfShift, half -1 for the
// whole window and 0 or 1 for a split one's halves, or kSpareBlock for a block without a macroblock.
constexpr int kHalfShift = 28;
constexpr int kSpareBlock = -1;
GME_HOST_DEVICE inline int block_entry(int mb, int half) { return mb | ((half + 1) << kHalfShift); }
GME_HOST_DEVICE inline int entry_mb(int entry) { return entry & ((1 << kHalfShift) - 1); }
GME_HOST_DEVICE inline int entry_half(int entry) { return (entry >> kHalfShift) - 1; }
inline size_t cost_order_entries(int num_mbs, int bands) {
  return static_cast<size_t>(num_mbs) + static_cast<size_t>(bands) * kMaxSplit;
}

// Mixed order. The longest lists' blocks slow one another down where several share an SM: heaviest first, a
// picture's costliest blocks start together, five to an SM. Those calls interleave runs of the band's costliest and
// cheapest macroblocks instead, kMixRun of each in turn (ranks 0..4, n-1..n-5, 5..9, ...): each SM starts with some
// of either, and the cheap ones, done early, hand their slots to the next. Which blocks share an SM follows from how
// the block scheduler spreads consecutive blocks over the SMs, which CUDA leaves unspecified: the run length is
// measured (runs of 1, 2, 5, 66 and 132 compared in doc/EXPERIMENTS.md). Only the first wave (the blocks the GPU
// starts at once) is mixed, of the costliest and cheapest halves of its size; the blocks after it take the slots
// that free up heaviest first, so that the picture ends with cheap blocks rather than middling ones.
constexpr int kMixMinTopK = 8;
constexpr int kMixRun = 5;
GME_HOST_DEVICE constexpr bool mixes_order(int top_k) { return top_k >= kMixMinTopK; }

// Block of the mixed order (runs of `run`) that takes the costly half's idx-th macroblock (costly: ranks 0..ceil(n /
// 2) - 1 by rank) or the cheap half's (the others, cheapest first): whole runs of both while the cheap half has
// them, then the rest alternating singly.
GME_HOST_DEVICE inline int mixed_block(int idx, bool costly, int n, int run) {
  const int full = n / 2 / run * run;
  return idx < full ? 2 * run * (idx / run) + (costly ? 0 : run) + idx % run
                    : 2 * full + 2 * (idx - full) + (costly ? 0 : 1);
}

// How many of a band's n blocks the mixed order mixes, the first wave of `wave` blocks (0: all): an even count, the
// wave's costliest and cheapest halves, or all n where the wave holds them.
GME_HOST_DEVICE inline int mixed_blocks(int n, int wave) { return wave > 0 && wave < n ? wave / 2 * 2 : n; }

// Where a band's macroblock of cost rank `rank` goes among its n, `split` of its costliest being split: its two
// halves' blocks 2 rank and 2 rank + 1, else block rank + split, or in the mixed order (mix_run > 0, no split) the
// mixed_block of its half among the first mixed_blocks(n, wave), the ranks between those halves after them in order.
// The band's blocks from n + split on are spare.
GME_HOST_DEVICE inline void place_block(int* band_entries, int mb, int rank, int n, int split, int mix_run,
                                        int wave) {
  if (rank < split) {
    band_entries[2 * rank] = block_entry(mb, 0);
    band_entries[2 * rank + 1] = block_entry(mb, 1);
  } else if (mix_run > 0) {
    const int m = mixed_blocks(n, wave), costly_count = (m + 1) / 2;
    int block;
    if (rank < costly_count) block = mixed_block(rank, true, m, mix_run);
    else if (rank >= n - m / 2) block = mixed_block(n - 1 - rank, false, m, mix_run);
    else block = m + rank - costly_count;
    band_entries[block] = block_entry(mb, -1);
  } else {
    band_entries[rank + split] = block_entry(mb, -1);
  }
}

// The table for every band: its macroblocks by cost, highest first, equal costs by macroblock number, the split
// ones (split: split_worthy against the `wave` blocks the GPU runs at once, at most kMaxSplit) first; or in the mixed
// order in runs of mix_run over the first `wave` blocks (mix_run > 0, no split; wave 0: all).
inline std::vector<int> cost_order_plain(const uint32_t* cost, int refs, int num_mbs, const CostOrderBands& bands,
                                         int wave, bool split_windows, int mix_run) {
  std::vector<int> table(cost_order_entries(num_mbs, bands.count), kSpareBlock);
  uint64_t total = 0;
  for (int i = 0; i < num_mbs; ++i) total += macroblock_cost(cost, refs, num_mbs, i);
  for (int b = 0; b < bands.count; ++b) {
    const int lo = bands.start_mb[b], hi = bands.start_mb[b + 1];
    int split = 0;
    for (int i = lo; i < hi; ++i)
      split += split_windows && split_worthy(macroblock_cost(cost, refs, num_mbs, i), total, refs, wave) ? 1 : 0;
    split = std::min(split, kMaxSplit);
    for (int i = lo; i < hi; ++i) {
      const uint32_t c = macroblock_cost(cost, refs, num_mbs, i);
      int rank = 0;
      for (int j = lo; j < hi; ++j) {
        const uint32_t d = macroblock_cost(cost, refs, num_mbs, j);
        rank += d > c || (d == c && j < i);
      }
      place_block(&table[static_cast<size_t>(lo + b * kMaxSplit)], i, rank, hi - lo, split, mix_run, wave);
    }
  }
  return table;
}

}  // namespace gme

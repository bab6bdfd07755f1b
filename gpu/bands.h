// How a picture's search is cut into bands of macroblock rows (gpu/cuda_search.h's CudaSearch launches a band's
// kernels as soon as its rows of the current picture are on the device). Plain C++, so that the tests hold the layout
// without a GPU.
#pragma once
#include <algorithm>
#include <vector>

namespace gme {
namespace cuda_search {

// The block scheduler starts a band's blocks only after the blocks of the bands launched before it, so the costliest
// macroblocks can start first (the launch order, gpu/cost_order.h) only among those of their band; and a band's
// last blocks leave SMs idle while other bands' blocks are still queued behind earlier ones. Small pictures
// therefore gain less from starting early than they lose there: a picture of at most kOneBandMbs macroblocks
// (640x480) is one band, whose upload is short beside its kernel (the longest blocks bound that kernel, and they
// all start first); a larger one has bands of at least kBandMbs macroblocks, kBands at most (8 at 1080p). A search
// queued ahead launches its bands as its reference's rows become final, so it takes 2 at least
// (bands_queued_ahead): the first then starts before the reference is whole.
constexpr int kBands = 8;
constexpr int kBandMbs = 600;
constexpr int kOneBandMbs = 2 * kBandMbs;
inline int bands_for(int num_mbs) { return num_mbs <= kOneBandMbs ? 1 : std::clamp(num_mbs / kBandMbs, 2, kBands); }
inline int bands_queued_ahead(int num_mbs) { return std::max(2, bands_for(num_mbs)); }

// Macroblock row where each band starts, and mb_height at the end: at most `bands` bands of equal rows, counted from
// the bottom, the first taking what is left (one row to a whole band; 1080p: 5/9/9/9/9/9/9/9, 640x480 queued
// ahead: 15/15).
// Why the short band first: a picture ends with the blocks its last band starts last, and with the launch order
// those are the band's cheapest only where the band spans more than the GPU's blocks at a time; a short band last
// would start its costliest blocks at the very end. First, it also starts the GPU after fewer rows sent.
inline std::vector<int> band_starts(int mb_height, int bands) {
  const int n = std::max(1, bands);
  const int rows = (mb_height + n - 1) / n;
  const int count = (mb_height + rows - 1) / rows;  // `bands` or fewer: none empty
  std::vector<int> start = {0};
  for (int b = 1; b < count; ++b) start.push_back(mb_height - rows * (count - b));
  start.push_back(mb_height);
  return start;
}

// The band holding macroblock row `row` (band_starts' layout).
inline int band_of_row(const std::vector<int>& start, int row) {
  return static_cast<int>(std::upper_bound(start.begin(), start.end(), row) - start.begin()) - 1;
}

}  // namespace cuda_search
}  // namespace gme

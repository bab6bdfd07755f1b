// JM's spiral order of the positions of a search window (lencod/src/mv_search.c): the order that breaks ties
// between equal motion costs. One definition for host and device (common/host_device.h): the CPU searches, the
// picture-level twin and the CUDA kernels must agree on every index.
#pragma once
#include <cmath>

#include "common/host_device.h"

namespace gme {

// The centre first, then rings of growing Chebyshev radius l; inside a ring, rows y = -l and y = +l for
// x = -l+1..l-1 (interleaved -l, +l), then columns x = -l and x = +l for y = -l..l (interleaved). A smaller index
// wins a tie.
GME_HOST_DEVICE constexpr int spiral_index(int dx, int dy) {
  int ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;
  int l = ax > ay ? ax : ay;
  if (l == 0) return 0;
  int base = (2 * l - 1) * (2 * l - 1);
  if (ay == l && ax < l) return base + 2 * (dx + l - 1) + (dy > 0 ? 1 : 0);
  return base + 2 * (2 * l - 1) + 2 * (dy + l) + (dx > 0 ? 1 : 0);
}

// Inverse of spiral_index(): the offset (dx, dy) of spiral position s >= 0.
GME_HOST_DEVICE inline void spiral_offset(int s, int* dx, int* dy) {
  // Ring l holds indices [(2l-1)^2, (2l+1)^2), so l = (floor(sqrt(s)) + 1) / 2. The floating-point root only seeds
  // q; the two loops make it exact.
#ifdef __CUDA_ARCH__
  int q = static_cast<int>(sqrtf(static_cast<float>(s)));
#else
  int q = static_cast<int>(std::sqrt(static_cast<double>(s)));
#endif
  while (q * q > s) --q;
  while ((q + 1) * (q + 1) <= s) ++q;
  const int l = (q + 1) / 2;
  if (l == 0) {
    *dx = 0;
    *dy = 0;
    return;
  }
  const int r = s - (2 * l - 1) * (2 * l - 1);
  if (r < 2 * (2 * l - 1)) {  // rows y = -l / +l, x = -l+1 .. l-1
    *dx = r / 2 - l + 1;
    *dy = (r & 1) ? l : -l;
  } else {                    // columns x = -l / +l, y = -l .. l
    const int r2 = r - 2 * (2 * l - 1);
    *dy = r2 / 2 - l;
    *dx = (r2 & 1) ? l : -l;
  }
}

}  // namespace gme

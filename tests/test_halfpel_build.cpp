// common/halfpel.cpp: the SIMD build of the full/half-pel planes against its plain C++ twin, bit for bit, over
// the whole padded area, on random and extreme pictures of several sizes (test_mc.cpp checks the planes against
// the standard's samples); a region built alone against the planes.
#include <gtest/gtest.h>

#include <random>

#include "common/halfpel.h"

namespace gme {
namespace {

TEST(HalfpelBuild, SimdMatchesReference) {
  std::mt19937 rng(99);
  const int sizes[][2] = {{16, 16}, {48, 32}, {176, 144}, {64, 16}};
  for (const auto& sz : sizes)
    for (int mode = 0; mode < 3; ++mode) {  // random, 0/255 extremes (6-tap overshoot and clipping), smooth
      Plane ref;
      ref.alloc(sz[0], sz[1], kLumaPad);
      for (int y = 0; y < sz[1]; ++y)
        for (int x = 0; x < sz[0]; ++x)
          ref.at(x, y)[0] = mode == 0 ? static_cast<uint8_t>(rng())
                                      : mode == 1 ? ((rng() & 1) ? 255 : 0) : static_cast<uint8_t>(x + 2 * y);
      ref.extend_borders();
      HalfpelPlanes want, got;
      build_halfpel_planes_ref(ref, &want);
      build_halfpel_planes(ref, &got);
      EXPECT_NE(want.serial, got.serial);
      const Plane* w[4] = {&want.g, &want.b, &want.h, &want.j};
      const Plane* g[4] = {&got.g, &got.b, &got.h, &got.j};
      for (int k = 0; k < 4; ++k)
        for (int y = -kHalfpelPad; y < sz[1] + kHalfpelPad; ++y)
          for (int x = -kHalfpelPad; x < sz[0] + kHalfpelPad; ++x)
            ASSERT_EQ(g[k]->at(x, y)[0], w[k]->at(x, y)[0])
                << "plane " << k << " at " << x << "," << y << " size " << sz[0] << "x" << sz[1] << " mode " << mode;
    }
}

// A region built alone (blocks beyond the planes) equals the planes where they cover it, for every size up to the
// limit, at the picture's corners and edges and across the planes' outer border (edge replication both ways).
TEST(HalfpelBuild, RegionMatchesPlanes) {
  std::mt19937 rng(7);
  Plane ref;
  ref.alloc(48, 32, kLumaPad);
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 48; ++x) ref.at(x, y)[0] = (rng() & 3) ? static_cast<uint8_t>(rng()) : ((rng() & 1) ? 255 : 0);
  ref.extend_borders();
  HalfpelPlanes planes;
  build_halfpel_planes_ref(ref, &planes);
  const Plane* kinds[4] = {&planes.g, &planes.b, &planes.h, &planes.j};
  for (int trial = 0; trial < 300; ++trial) {
    const int cols = 1 + static_cast<int>(rng() % kHalfpelRegionMax), rows = 1 + static_cast<int>(rng() % kHalfpelRegionMax);
    const int x = -kHalfpelPad + static_cast<int>(rng() % (48 + 2 * kHalfpelPad - cols + 1));
    const int y = -kHalfpelPad + static_cast<int>(rng() % (32 + 2 * kHalfpelPad - rows + 1));
    constexpr int kStride = 40;
    uint8_t out[4][kHalfpelRegionMax * kStride];
    build_halfpel_region(ref, x, y, cols, rows, kStride, out[0], out[1], out[2], out[3]);
    for (int k = 0; k < 4; ++k)
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
          ASSERT_EQ(out[k][r * kStride + c], kinds[k]->at(x + c, y + r)[0])
              << "kind " << k << " region " << cols << "x" << rows << " at (" << x << "," << y << ") sample (" << c
              << "," << r << ")";
  }
}

}  // namespace
}  // namespace gme

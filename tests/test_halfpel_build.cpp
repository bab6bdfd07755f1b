// common/halfpel.cpp: the SIMD build of the full/half-pel planes against its plain C++ twin, bit for bit, over
// the whole padded area, on random and extreme pictures of several sizes (test_mc.cpp checks the planes against
// the standard's samples).
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

}  // namespace
}  // namespace gme

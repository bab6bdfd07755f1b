// common/halfpel.cpp and common/mc_planes.cpp with this CPU's function table (tests/test_checkasm.cpp holds its row
// kernels to the plain ones; test_mc.cpp checks the planes against the standard's samples): a region built alone
// against the planes, and motion compensation from the planes against mc_luma.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "common/halfpel.h"
#include "common/mc.h"
#include "common/mc_planes.h"
#include "tests/dsp_tables.h"

namespace gme {
namespace {

// The build in bands (as the encoder's threads do it), bands of every height in any order: the whole build's planes,
// with either function table.
TEST(HalfpelBuild, BandsMatchTheWholeBuild) {
  std::mt19937 rng(5);
  for (const DspFuncs* dsp : {&dsp_here(), &dsp_plain()}) {
    for (const auto& sz : {std::pair<int, int>{48, 32}, {176, 144}, {16, 16}}) {
      Plane ref;
      ref.alloc(sz.first, sz.second, kLumaPad);
      for (int y = 0; y < sz.second; ++y)
        for (int x = 0; x < sz.first; ++x) ref.at(x, y)[0] = static_cast<uint8_t>(rng());
      ref.extend_borders();
      HalfpelPlanes whole, banded;
      build_halfpel_planes(dsp->halfpel, ref, &whole);
      prepare_halfpel_planes(ref, &banded);
      EXPECT_NE(whole.serial, banded.serial);
      std::vector<int> cuts = {-kHalfpelPad, sz.second + kHalfpelPad};
      for (int k = 0; k < 5; ++k) cuts.push_back(-kHalfpelPad + 1 + static_cast<int>(rng() % (sz.second + 2 * kHalfpelPad - 1)));
      std::sort(cuts.begin(), cuts.end());
      cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
      for (size_t i = cuts.size() - 1; i-- > 0;) {  // last band first
        HalfpelScratch scratch;
        build_halfpel_plane_rows(dsp->halfpel, ref, &banded, cuts[i], cuts[i + 1], &scratch);
      }
      const Plane* w[4] = {&whole.g, &whole.b, &whole.h, &whole.j};
      const Plane* g[4] = {&banded.g, &banded.b, &banded.h, &banded.j};
      for (int k = 0; k < 4; ++k)
        for (int y = -kHalfpelPad; y < sz.second + kHalfpelPad; ++y)
          ASSERT_EQ(0, std::memcmp(g[k]->at(-kHalfpelPad, y), w[k]->at(-kHalfpelPad, y), sz.first + 2 * kHalfpelPad))
              << "plane " << k << " row " << y << " size " << sz.first << "x" << sz.second;
    }
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
  build_halfpel_planes(dsp_plain().halfpel, ref, &planes);
  const Plane* kinds[4] = {&planes.g, &planes.b, &planes.h, &planes.j};
  for (int trial = 0; trial < 300; ++trial) {
    const int cols = 1 + static_cast<int>(rng() % kHalfpelRegionMax), rows = 1 + static_cast<int>(rng() % kHalfpelRegionMax);
    const int x = -kHalfpelPad + static_cast<int>(rng() % (48 + 2 * kHalfpelPad - cols + 1));
    const int y = -kHalfpelPad + static_cast<int>(rng() % (32 + 2 * kHalfpelPad - rows + 1));
    constexpr int kStride = 40;
    uint8_t out[4][kHalfpelRegionMax * kStride];
    build_halfpel_region(dsp_here().halfpel, ref, x, y, cols, rows, kStride, out[0], out[1], out[2], out[3]);
    for (int k = 0; k < 4; ++k)
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
          ASSERT_EQ(out[k][r * kStride + c], kinds[k]->at(x + c, y + r)[0])
              << "kind " << k << " region " << cols << "x" << rows << " at (" << x << "," << y << ") sample (" << c
              << "," << r << ")";
  }
}

// mc_luma_planes (common/mc_planes.h) against mc_luma, its plain reference: every block size, all 16 quarter-pel
// phases, vectors near the picture and far outside it (where the planes do not cover the block and mc_luma answers),
// writing exactly w bytes per row (a guard pattern around the block must survive).
TEST(McPlanes, MatchesMcLuma) {
  std::mt19937 rng(2026);
  const int width = 64, height = 48;
  Frame f;
  f.alloc(width, height, width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      f.plane[0].at(x, y)[0] = (rng() & 3) ? static_cast<uint8_t>(rng()) : ((rng() & 1) ? 255 : 0);
  f.extend_borders();
  auto planes = std::make_shared<HalfpelPlanes>();
  build_halfpel_planes(dsp_here().halfpel, f.plane[0], planes.get());
  const int sizes[][2] = {{16, 16}, {16, 8}, {8, 16}, {8, 8}, {8, 4}, {4, 8}, {4, 4}};
  int from_planes = 0, fallback = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const int* sz = sizes[trial % 7];
    const int w = sz[0], h = sz[1];
    const int x = 4 * static_cast<int>(rng() % (width / 4 - w / 4 + 1)), y = 4 * static_cast<int>(rng() % (height / 4 - h / 4 + 1));
    const int reach = trial % 5 == 0 ? 1200 : 240;  // quarter pel: mostly within the planes, sometimes far out
    const MV mv(static_cast<int>(rng() % (2 * reach + 1)) - reach, static_cast<int>(rng() % (2 * reach + 1)) - reach);
    uint8_t want[18 * 18], got[18 * 18];
    std::memset(want, 0xA5, sizeof want);
    std::memset(got, 0xA5, sizeof got);
    mc_luma(want + 18 + 1, 18, f.plane[0], x, y, mv, w, h);
    mc_luma_planes(dsp_here().mc, got + 18 + 1, 18, *planes, f.plane[0], x, y, mv, w, h);
    ASSERT_EQ(std::memcmp(want, got, sizeof want), 0)
        << w << "x" << h << " at (" << x << "," << y << ") mv (" << mv.x << "," << mv.y << ")";
    (planes->covers(x + (mv.x >> 2), y + (mv.y >> 2), w, h) ? from_planes : fallback)++;
  }
  EXPECT_GT(from_planes, 2000);  // both paths exercised
  EXPECT_GT(fallback, 100);
  // predict_luma picks the planes when the frame has them, mc_luma otherwise: the same samples either way.
  uint8_t a[256], b[256];
  predict_luma(dsp_here().mc, a, 16, f, 16, 16, MV(-7, 5), 16, 16);
  f.halfpel = planes;
  predict_luma(dsp_here().mc, b, 16, f, 16, 16, MV(-7, 5), 16, 16);
  EXPECT_EQ(std::memcmp(a, b, sizeof a), 0);
}

}  // namespace
}  // namespace gme

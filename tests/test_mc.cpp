// Motion compensation against a direct, slow transcription of H.264 8.4.2.2.1 / 8.4.2.2.2: every sample is
// derived from the picture with coordinates clipped into it (the standard's reference sample fetch), at random
// positions including vectors pointing far outside the picture.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "common/frame.h"
#include "common/halfpel.h"
#include "common/mc.h"
#include "tests/dsp_tables.h"

namespace gme {
namespace {

// Picture sample with the standard's coordinate clipping (8-228, 8-229), read from the visible plane only.
int pel(const Plane& p, int x, int y) { return p.row(clip3(0, p.height - 1, y))[clip3(0, p.width - 1, x)]; }

int clip1(int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }

// Table 8-12 sample names relative to full sample G at (xi, yi).
int luma_sample_slow(const Plane& p, int xi, int yi, int xf, int yf) {
  auto G = [&](int dx, int dy) { return pel(p, xi + dx, yi + dy); };
  const int tap[6] = {1, -5, 20, 20, -5, 1};
  auto b1 = [&](int dx, int dy) { int s = 0; for (int k = 0; k < 6; ++k) s += tap[k] * G(dx - 2 + k, dy); return s; };
  auto h1 = [&](int dx, int dy) { int s = 0; for (int k = 0; k < 6; ++k) s += tap[k] * G(dx, dy - 2 + k); return s; };
  auto j1 = [&]() { int s = 0; for (int k = 0; k < 6; ++k) s += tap[k] * b1(0, k - 2); return s; };
  // Also via h1 to check the standard's claim that both directions agree.
  auto j1v = [&]() { int s = 0; for (int k = 0; k < 6; ++k) s += tap[k] * h1(k - 2, 0); return s; };
  const int b = clip1((b1(0, 0) + 16) >> 5), h = clip1((h1(0, 0) + 16) >> 5);
  const int s = clip1((b1(0, 1) + 16) >> 5), m = clip1((h1(1, 0) + 16) >> 5);
  const int j = clip1((j1() + 512) >> 10);
  EXPECT_EQ(j1(), j1v());
  const int Gv = G(0, 0), H = G(1, 0), M = G(0, 1);
  auto av = [](int u, int v) { return (u + v + 1) >> 1; };
  switch (yf * 4 + xf) {
    case 0: return Gv;
    case 1: return av(Gv, b);   // a
    case 2: return b;
    case 3: return av(b, H);    // c
    case 4: return av(Gv, h);   // d
    case 5: return av(b, h);    // e
    case 6: return av(b, j);    // f
    case 7: return av(b, m);    // g
    case 8: return h;
    case 9: return av(h, j);    // i
    case 10: return j;
    case 11: return av(j, m);   // k
    case 12: return av(M, h);   // n
    case 13: return av(h, s);   // p
    case 14: return av(j, s);   // q
    default: return av(m, s);   // r
  }
}

int chroma_sample_slow(const Plane& p, int xi, int yi, int xf, int yf) {
  return ((8 - xf) * (8 - yf) * pel(p, xi, yi) + xf * (8 - yf) * pel(p, xi + 1, yi) +
          (8 - xf) * yf * pel(p, xi, yi + 1) + xf * yf * pel(p, xi + 1, yi + 1) + 32) >> 6;
}

Plane random_plane(int w, int h, int pad, std::mt19937& rng) {
  Plane p;
  p.alloc(w, h, pad);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) p.at(x, y)[0] = static_cast<uint8_t>(rng());
  p.extend_borders();
  return p;
}

const int kSizes[7][2] = {{16, 16}, {16, 8}, {8, 16}, {8, 8}, {8, 4}, {4, 8}, {4, 4}};

TEST(Mc, LumaMatchesStandardAtRandomPositions) {
  std::mt19937 rng(7);
  const Plane ref = random_plane(48, 32, kLumaPad, rng);
  for (int it = 0; it < 3000; ++it) {
    const int* sz = kSizes[it % 7];
    const int x = static_cast<int>(rng() % 48), y = static_cast<int>(rng() % 32);
    // Mostly near the picture, sometimes far outside (hundreds of pels).
    const int range = (it % 5 == 0) ? 4000 : 200;
    const MV mv(static_cast<int>(rng() % (2 * range + 1)) - range, static_cast<int>(rng() % (2 * range + 1)) - range);
    uint8_t dst[16 * 16];
    mc_luma(dst, 16, ref, x, y, mv, sz[0], sz[1]);
    for (int j = 0; j < sz[1]; ++j)
      for (int i = 0; i < sz[0]; ++i) {
        const int want = luma_sample_slow(ref, x + i + (mv.x >> 2), y + j + (mv.y >> 2), mv.x & 3, mv.y & 3);
        ASSERT_EQ(dst[j * 16 + i], want) << "mv " << mv.x << "," << mv.y << " at " << x << "," << y << " px " << i
                                         << "," << j;
      }
  }
}

TEST(Mc, LumaAllSixteenFractionsAtPictureCorners) {
  std::mt19937 rng(11);
  const Plane ref = random_plane(32, 32, kLumaPad, rng);
  const int pos[4][2] = {{0, 0}, {16, 0}, {0, 16}, {16, 16}};
  for (auto& pp : pos)
    for (int f = 0; f < 16; ++f)
      for (int base : {-20, -1, 0, 1, 20}) {
        const MV mv(4 * base + (f & 3), 4 * -base + (f >> 2));
        uint8_t dst[16 * 16];
        mc_luma(dst, 16, ref, pp[0], pp[1], mv, 16, 16);
        for (int j = 0; j < 16; ++j)
          for (int i = 0; i < 16; ++i)
            ASSERT_EQ(dst[j * 16 + i], luma_sample_slow(ref, pp[0] + i + (mv.x >> 2), pp[1] + j + (mv.y >> 2),
                                                         mv.x & 3, mv.y & 3));
      }
}

// The slow reference on a case worked by hand: on a horizontal ramp 2x (far from edges) the half sample b is
// exactly 2x + 1 and a = (2x + 2x + 1 + 1) >> 1 = 2x + 1.
// common/halfpel.h: the G, b, h, j planes over the whole padded area equal the standard's samples (Table 8-12)
// at full, half-right, half-below and centre positions, including the corners of the kHalfpelPad border.
TEST(Mc, HalfpelPlanesMatchStandardEverywhere) {
  std::mt19937 rng(13);
  const Plane ref = random_plane(48, 32, kLumaPad, rng);
  HalfpelPlanes hp;
  build_halfpel_planes(dsp_here().halfpel, ref, &hp);
  ASSERT_EQ(hp.g.pad, kHalfpelPad);
  for (int y = -kHalfpelPad; y < ref.height + kHalfpelPad; ++y)
    for (int x = -kHalfpelPad; x < ref.width + kHalfpelPad; ++x) {
      ASSERT_EQ(hp.g.at(x, y)[0], luma_sample_slow(ref, x, y, 0, 0)) << x << "," << y;
      ASSERT_EQ(hp.b.at(x, y)[0], luma_sample_slow(ref, x, y, 2, 0)) << x << "," << y;
      ASSERT_EQ(hp.h.at(x, y)[0], luma_sample_slow(ref, x, y, 0, 2)) << x << "," << y;
      ASSERT_EQ(hp.j.at(x, y)[0], luma_sample_slow(ref, x, y, 2, 2)) << x << "," << y;
    }
  EXPECT_TRUE(hp.covers(0, 0, 16, 16));
  EXPECT_FALSE(hp.covers(-kHalfpelPad, 0, 16, 16));  // the quarter-pel column left of it is outside
  EXPECT_FALSE(hp.covers(ref.width + kHalfpelPad - 16, 0, 16, 16));
}

TEST(Mc, LumaRampKnownValues) {
  Plane p;
  p.alloc(64, 16, kLumaPad);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 64; ++x) p.at(x, y)[0] = static_cast<uint8_t>(2 * x);
  p.extend_borders();
  uint8_t dst[16 * 16];
  mc_luma(dst, 16, p, 20, 0, MV(2, 0), 4, 4);  // b
  EXPECT_EQ(dst[0], 41);
  mc_luma(dst, 16, p, 20, 0, MV(1, 0), 4, 4);  // a
  EXPECT_EQ(dst[0], 41);
  mc_luma(dst, 16, p, 20, 0, MV(3, 0), 4, 4);  // c = (b + H + 1) >> 1 = (41 + 42 + 1) >> 1
  EXPECT_EQ(dst[0], 42);
  mc_luma(dst, 16, p, 20, 0, MV(2, 2), 4, 4);  // j: vertically constant -> b
  EXPECT_EQ(dst[1], 43);
}

TEST(Mc, ChromaMatchesStandardAtRandomPositions) {
  std::mt19937 rng(9);
  const Plane ref = random_plane(24, 16, kChromaPad, rng);
  const int csz[4][2] = {{8, 8}, {8, 4}, {4, 8}, {4, 4}};
  for (int it = 0; it < 3000; ++it) {
    const int* sz = csz[it % 4];
    const int x = static_cast<int>(rng() % 24), y = static_cast<int>(rng() % 16);
    const int range = (it % 5 == 0) ? 4000 : 120;
    const MV mv(static_cast<int>(rng() % (2 * range + 1)) - range, static_cast<int>(rng() % (2 * range + 1)) - range);
    uint8_t dst[8 * 8];
    mc_chroma_c(dst, 8, ref, x, y, mv, sz[0], sz[1]);
    for (int j = 0; j < sz[1]; ++j)
      for (int i = 0; i < sz[0]; ++i)
        ASSERT_EQ(dst[j * 8 + i], chroma_sample_slow(ref, x + i + (mv.x >> 3), y + j + (mv.y >> 3), mv.x & 7, mv.y & 7))
            << "mv " << mv.x << "," << mv.y;
  }
  // Hand-worked: an eighth of the way from 0 to 64 (xFrac 1, yFrac 0): (56 * 0 + 8 * 64 + 32) >> 6 = 8.
  Plane p;
  p.alloc(8, 8, kChromaPad);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) p.at(x, y)[0] = static_cast<uint8_t>(x == 1 ? 64 : 0);
  p.extend_borders();
  uint8_t d[4];
  mc_chroma_c(d, 4, p, 0, 0, MV(1, 0), 1, 1);
  EXPECT_EQ(d[0], 8);
}

}  // namespace
}  // namespace gme

// Intra prediction sample generation against hand-computed values from the equations of 8.3.1.2, 8.3.3, 8.3.4.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/intra_pred.h"
#include "tests/dsp_tables.h"

namespace gme {
namespace {

Edge4x4 edge4(const int top[8], const int left[4], int tl) {
  Edge4x4 e;
  for (int i = 0; i < 8; ++i) e.top[i] = static_cast<uint8_t>(top[i]);
  for (int i = 0; i < 4; ++i) e.left[i] = static_cast<uint8_t>(left[i]);
  e.top_left = static_cast<uint8_t>(tl);
  e.has_top = e.has_left = e.has_top_left = true;
  return e;
}

TEST(IntraPred, Dc4x4Availability) {
  const int top[8] = {10, 20, 30, 40, 0, 0, 0, 0}, left[4] = {1, 2, 3, 5};
  Edge4x4 e = edge4(top, left, 0);
  uint8_t p[16];
  predict_intra4x4(kI4DC, e, p);
  EXPECT_EQ(p[0], (100 + 11 + 4) >> 3);
  e.has_top = false;
  predict_intra4x4(kI4DC, e, p);
  EXPECT_EQ(p[5], (11 + 2) >> 2);
  e.has_left = false;
  predict_intra4x4(kI4DC, e, p);
  EXPECT_EQ(p[15], 128);
  EXPECT_TRUE(intra4x4_mode_available(kI4DC, e));
  EXPECT_FALSE(intra4x4_mode_available(kI4V, e));
  EXPECT_FALSE(intra4x4_mode_available(kI4HU, e));
}

TEST(IntraPred, Directional4x4HandWorked) {
  // Neighbours: M(top-left) = 50, A..H = 10 20 30 40 50 60 70 80, I..L = 15 25 35 45.
  const int top[8] = {10, 20, 30, 40, 50, 60, 70, 80}, left[4] = {15, 25, 35, 45};
  Edge4x4 e = edge4(top, left, 50);
  uint8_t p[16];
  predict_intra4x4(kI4DDL, e, p);
  EXPECT_EQ(p[0], (10 + 40 + 30 + 2) >> 2);   // (A + 2B + C + 2) >> 2 = 20
  EXPECT_EQ(p[15], (70 + 3 * 80 + 2) >> 2);   // (G + 3H + 2) >> 2
  EXPECT_EQ(p[4 * 1 + 2], (40 + 100 + 60 + 2) >> 2);  // x + y = 3: (D + 2E + F + 2) >> 2
  predict_intra4x4(kI4DDR, e, p);
  EXPECT_EQ(p[0], (10 + 100 + 15 + 2) >> 2);  // (A + 2M + I + 2) >> 2
  EXPECT_EQ(p[1], (50 + 20 + 20 + 2) >> 2);   // (M + 2A + B + 2) >> 2
  EXPECT_EQ(p[4], (50 + 30 + 25 + 2) >> 2);   // (M + 2I + J + 2) >> 2
  EXPECT_EQ(p[12], (25 + 70 + 45 + 2) >> 2);  // (J + 2K + L + 2) >> 2
  predict_intra4x4(kI4VR, e, p);
  EXPECT_EQ(p[0], (50 + 10 + 1) >> 1);        // (M + A + 1) >> 1
  EXPECT_EQ(p[4], (15 + 100 + 10 + 2) >> 2);  // zVR = -1: (I + 2M + A + 2) >> 2
  EXPECT_EQ(p[8], (50 + 30 + 25 + 2) >> 2);   // zVR = -2: (M + 2I + J + 2) >> 2 (p[-1,y-1] + 2p[-1,y-2] + p[-1,y-3])
  predict_intra4x4(kI4HD, e, p);
  EXPECT_EQ(p[0], (50 + 15 + 1) >> 1);        // (M + I + 1) >> 1
  EXPECT_EQ(p[1], (15 + 100 + 10 + 2) >> 2);  // zHD = -1
  EXPECT_EQ(p[2], (50 + 20 + 20 + 2) >> 2);   // zHD = -2: (p[1,-1] + 2p[0,-1] + p[-1,-1] + 2) >> 2
  predict_intra4x4(kI4VL, e, p);
  EXPECT_EQ(p[0], (10 + 20 + 1) >> 1);
  EXPECT_EQ(p[4 * 3 + 3], (50 + 120 + 70 + 2) >> 2);  // y = 3, x = 3: i = 4: (E + 2F + G + 2) >> 2
  predict_intra4x4(kI4HU, e, p);
  EXPECT_EQ(p[0], (15 + 25 + 1) >> 1);
  EXPECT_EQ(p[1], (15 + 50 + 35 + 2) >> 2);
  EXPECT_EQ(p[4 * 2 + 1], (35 + 3 * 45 + 2) >> 2);  // zHU = 5
  EXPECT_EQ(p[15], 45);
}

TEST(IntraPred, TopRightSubstitution) {
  uint8_t plane[8 * 8];
  for (int i = 0; i < 64; ++i) plane[i] = static_cast<uint8_t>(i);
  Edge4x4 e;
  gather_edge4x4(plane + 8 * 1 + 1, 8, true, true, true, false, e);
  for (int i = 4; i < 8; ++i) EXPECT_EQ(e.top[i], e.top[3]);
  EXPECT_EQ(e.top[0], 1);
  EXPECT_EQ(e.left[2], 8 * 3);
  EXPECT_EQ(e.top_left, 0);
}

TEST(IntraPred, Plane16ReproducesLinearRamp) {
  // p(x, y) = 100 + x + y for x, y in -1..15 is reproduced exactly by Intra16x16 plane prediction.
  Edge16 e;
  for (int i = 0; i < 16; ++i) { e.top[i] = static_cast<uint8_t>(99 + i); e.left[i] = static_cast<uint8_t>(99 + i); }
  e.top_left = 98;
  e.has_top = e.has_left = e.has_top_left = true;
  uint8_t p[256];
  predict_intra16x16(dsp_plain().intra, kI16Plane, e, p);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) ASSERT_EQ(p[16 * y + x], 100 + x + y);
}

TEST(IntraPred, Dc16AndChromaDcRules) {
  Edge16 e;
  for (int i = 0; i < 16; ++i) { e.top[i] = 200; e.left[i] = static_cast<uint8_t>(i < 4 ? 10 : 30); }
  e.top_left = 0;
  e.has_top = true;
  e.has_left = true;
  uint8_t p16[256];
  predict_intra16x16(dsp_plain().intra, kI16DC, e, p16);
  EXPECT_EQ(p16[0], (16 * 200 + 4 * 10 + 12 * 30 + 16) >> 5);
  uint8_t c[64];
  predict_intra_chroma(dsp_plain().intra, kIcDC, e, c);
  EXPECT_EQ(c[0], (800 + 40 + 4) >> 3);        // top-left block: both edges
  EXPECT_EQ(c[4], 200);                        // top-right block: top edge only
  EXPECT_EQ(c[8 * 4], 30);                     // bottom-left block: left edge only
  EXPECT_EQ(c[8 * 4 + 4], (800 + 120 + 4) >> 3);  // bottom-right block: both edges
  e.has_left = false;
  predict_intra_chroma(dsp_plain().intra, kIcDC, e, c);
  EXPECT_EQ(c[8 * 4], 200);                    // bottom-left falls back to the top edge
  e.has_top = false;
  e.has_left = true;
  predict_intra_chroma(dsp_plain().intra, kIcDC, e, c);
  EXPECT_EQ(c[4], 10);                         // top-right falls back to the left edge (rows 0..3)
  EXPECT_FALSE(intra_chroma_mode_available(kIcV, e));
  EXPECT_FALSE(intra_chroma_mode_available(kIcPlane, e));
}

TEST(IntraPred, ChromaPlaneHandWorked) {
  // Flat neighbours give a flat plane; a horizontal ramp top = 8 * x gives b = (34 * H + 32) >> 6.
  Edge16 e;
  for (int i = 0; i < 8; ++i) { e.top[i] = static_cast<uint8_t>(8 * i + 8); e.left[i] = 0; }
  e.top_left = 0;
  e.has_top = e.has_left = e.has_top_left = true;
  uint8_t c[64];
  predict_intra_chroma(dsp_plain().intra, kIcPlane, e, c);
  int H = 0;
  for (int i = 0; i < 4; ++i) H += (i + 1) * (e.top[4 + i] - (2 - i >= 0 ? e.top[2 - i] : e.top_left));
  int V = 0;
  for (int i = 0; i < 4; ++i) V += (i + 1) * (e.left[4 + i] - (2 - i >= 0 ? e.left[2 - i] : e.top_left));
  const int a = 16 * (e.left[7] + e.top[7]), b = (34 * H + 32) >> 6, cc = (34 * V + 32) >> 6;
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) {
      int v = (a + b * (x - 3) + cc * (y - 3) + 16) >> 5;
      v = v < 0 ? 0 : v > 255 ? 255 : v;
      ASSERT_EQ(c[8 * y + x], v);
    }
}

// A 4x4 prediction edge: kind 0 random samples, 1 all 0, 2 all 255, 3 random 0/255 extremes, 4 near-equal
// neighbours (the 2- and 3-tap filters' rounding cases); availability from bits 0-2 of `avail` (top, left,
// top-left).
Edge4x4 test_edge(std::mt19937& rng, int kind, int avail) {
  Edge4x4 e;
  const uint8_t base = static_cast<uint8_t>(rng());
  auto val = [&]() -> uint8_t {
    switch (kind) {
      case 0: return static_cast<uint8_t>(rng());
      case 1: return 0;
      case 2: return 255;
      case 3: return static_cast<uint8_t>((rng() & 1) * 255);
      default: return static_cast<uint8_t>(base + (rng() % 3) - 1);
    }
  };
  for (auto& t : e.top) t = val();
  for (auto& l : e.left) l = val();
  e.top_left = val();
  e.has_top = avail & 1;
  e.has_left = avail & 2;
  e.has_top_left = avail & 4;
  return e;
}

// predict_intra4x4_all (table-driven) against predict_intra4x4 mode by mode on random and extreme edges, every
// availability combination.
TEST(IntraPred, All4x4MatchesPerMode) {
  std::mt19937 rng(77);
  for (int rep = 0; rep < 4000; ++rep) {
    const Edge4x4 e = test_edge(rng, rep % 4, rep >> 2);
    uint8_t all[9][16];
    predict_intra4x4_all_c(e, all);
    for (int m = 0; m < 9; ++m) {
      uint8_t one[16];
      predict_intra4x4(m, e, one);
      ASSERT_EQ(std::memcmp(one, all[m], 16), 0) << "mode " << m << " rep " << rep;
    }
  }
}

}  // namespace
}  // namespace gme

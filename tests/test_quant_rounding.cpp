// The adaptive-rounding quantiser and offset state (common/quant_rounding.h) against JM 19.0's formulas worked by
// hand: quant_4x4_around's adjustment, update_offset_params' clipped additions onto the 4x4 lists, and the refresh
// schedule of encode_one_slice. The whole path is compared with JM's streams by tests/test_jm_golden.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/quant.h"
#include "common/quant_rounding.h"
#include "common/transform.h"

namespace gme {
namespace {

TEST(QuantAdaptive, UniformOffsetsGiveTheFixedQuantisersLevels) {
  std::mt19937 rng(5);
  for (int qp = 0; qp <= 51; ++qp) {
    for (int iter = 0; iter < 50; ++iter) {
      int coef[16], lev_a[16], lev_b[16];
      for (int& v : coef) v = static_cast<int>(rng() % 4001) - 2000;
      const int off = iter % 2 ? kOffsetIntraSlice : kOffsetInterSlice;
      int16_t offsets[16], adjust[16];
      for (int16_t& o : offsets) o = static_cast<int16_t>(off);
      const int first = iter % 3 == 0;
      ASSERT_EQ(quant4x4_adaptive(coef, qp, offsets, 4, first, lev_a, adjust), quant4x4(coef, qp, off, first, lev_b));
      ASSERT_EQ(0, std::memcmp(lev_a, lev_b, sizeof(lev_a))) << "qp " << qp;
    }
  }
}

TEST(QuantAdaptive, AdjustmentHandWorked) {
  // QP 28: DC scale 8192, qbits 19, offset 682 -> f = 682 << 8 = 174592; adjustment =
  // (weight * (|c| * 8192 - (level << 19)) + 2^19) >> 20 (arithmetic shift).
  int coef[16] = {}, lev[16];
  int16_t off[16], adj[16];
  for (int16_t& o : off) o = 682;
  coef[0] = 43;  // level (352256 + 174592) >> 19 = 1; (4 * (352256 - 524288) + 524288) >> 20 = -1
  coef[1] = 100;  // raster 1 (AC, scale 5243 at rem 4): level (524300 + 174592) >> 19 = 1; (4 * 12 + 2^19) >> 20 = 0
  coef[4] = 10;  // level 0: adjustment 0
  adj[5] = 77;   // zero coefficient: adjustment reset to 0
  EXPECT_EQ(quant4x4_adaptive(coef, 28, off, 4, 0, lev, adj), 2);
  EXPECT_EQ(adj[0], -1);
  EXPECT_EQ(adj[1], 0);
  EXPECT_EQ(adj[4], 0);
  EXPECT_EQ(adj[5], 0);
  coef[0] = 100;  // level 1, (4 * (819200 - 524288) + 2^19) >> 20 = 1
  quant4x4_adaptive(coef, 28, off, 4, 0, lev, adj);
  EXPECT_EQ(adj[0], 1);
  // A heavier weight scales it: (4096 * 294912 + 2^19) >> 20 = 1152 (the int product 1207959552 stays in range).
  quant4x4_adaptive(coef, 28, off, 4096, 0, lev, adj);
  EXPECT_EQ(adj[0], 1152);
  // AC only (first = 1): the DC position's adjustment is left as it was.
  adj[0] = 33;
  quant4x4_adaptive(coef, 28, off, 4, 1, lev, adj);
  EXPECT_EQ(adj[0], 33);
}

TEST(QuantAdaptive, EachPositionUsesItsOwnOffset) {
  // Two coefficients of the same class and size, one offset high and one low: only the first reaches level 1.
  int coef[16] = {}, lev[16];
  int16_t off[16], adj[16];
  for (int16_t& o : off) o = 0;
  off[0] = 1024;  // half a step
  coef[0] = 40;   // 40 * 8192 + (1024 << 8) = 589824 >= 2^19
  coef[2] = 40;   // raster 2: also class 0 (even, even), offset 0: 327680 < 2^19
  quant4x4_adaptive(coef, 28, off, 4, 0, lev, adj);
  EXPECT_EQ(lev[0], 1);                   // zig-zag 0 = raster 0
  for (int k = 1; k < 16; ++k) EXPECT_EQ(lev[k], 0) << k;
}

RoundingAdjust adjust_all(int16_t luma, int16_t chroma) {
  RoundingAdjust a;
  for (auto& row : a.luma)
    for (int16_t& v : row) v = luma;
  for (auto& c : a.chroma)
    for (auto& row : c)
      for (int16_t& v : row) v = chroma;
  return a;
}

RoundingConfig adaptive_config() {
  RoundingConfig c;
  c.adaptive = true;
  return c;
}

TEST(RoundingState, StartsAtJmDefaultsAndLatchesPerSliceType) {
  RoundingState s(adaptive_config());
  s.start_picture(false, 28, 28);
  EXPECT_EQ(s.offsets().luma[1][0], kOffsetIntraSlice);
  EXPECT_EQ(s.offsets().chroma[1][1][15], kOffsetIntraSlice);
  EXPECT_EQ(s.offsets().weight, 4);
  s.start_picture(true, 28, 28);
  EXPECT_EQ(s.offsets().luma[0][7], kOffsetInterSlice);
  EXPECT_EQ(s.offsets().luma[1][7], kOffsetInterSlice);
  EXPECT_EQ(s.offsets().chroma[0][0][3], kOffsetInterSlice);
}

TEST(RoundingState, UpdateAddsSixteenPositionsPerListEntryAndWaitsForTheRefresh) {
  RoundingState s(adaptive_config());
  s.start_picture(true, 30, 29);
  s.start_macroblock(0, true);
  s.update(false, false, adjust_all(1, 0));  // 16 macroblock positions land on each list position: +16
  EXPECT_EQ(s.offsets().luma[0][0], kOffsetInterSlice);  // latched offsets unchanged until the refresh
  s.start_macroblock(1, false);                         // JM tests the previous address: 0 % 16 == 0
  EXPECT_EQ(s.offsets().luma[0][0], kOffsetInterSlice + 16);
  EXPECT_EQ(s.offsets().luma[1][0], kOffsetInterSlice);  // intra macroblocks have their own list
  EXPECT_EQ(s.offsets().chroma[0][0][0], kOffsetInterSlice);  // AdaptRndChroma = 0
  s.update(false, false, adjust_all(1, 0));
  for (int mb = 2; mb <= 16; ++mb) s.start_macroblock(mb, false);
  EXPECT_EQ(s.offsets().luma[0][0], kOffsetInterSlice + 16);  // no refresh before macroblock 17
  s.start_macroblock(17, false);
  EXPECT_EQ(s.offsets().luma[0][0], kOffsetInterSlice + 32);
  s.update(false, false, adjust_all(5, 0));
  s.start_macroblock(32, true);  // the first macroblock of a slice looks at its own address
  EXPECT_EQ(s.offsets().luma[0][0], kOffsetInterSlice + 112);
  s.update(false, true, adjust_all(5, 0));  // I_PCM: no update
  s.start_macroblock(48, true);
  EXPECT_EQ(s.offsets().luma[0][0], kOffsetInterSlice + 112);
  // The I lists are untouched by P pictures.
  s.start_picture(false, 30, 29);
  EXPECT_EQ(s.offsets().luma[1][0], kOffsetIntraSlice);
}

TEST(RoundingState, AdditionsAreClippedOneAtATime) {
  RoundingState s(adaptive_config());
  s.start_picture(false, 28, 28);
  // +1000 then -1000 at every macroblock position of list position 0: 682 -> clip 1024 -> 24 -> clip 0 -> ...
  RoundingAdjust a = adjust_all(0, 0);
  a.luma[0][0] = 1000;
  a.luma[0][4] = -1000;
  a.luma[0][8] = 1000;
  s.update(true, false, a);
  s.start_macroblock(1, false);
  EXPECT_EQ(s.offsets().luma[1][0], 1024);  // 682 + 1000 -> 1024, -1000 -> 24, +1000 -> 1024
  a.luma[0][8] = 0;
  s.update(true, false, a);
  s.start_macroblock(1, false);
  EXPECT_EQ(s.offsets().luma[1][0], 24);
}

TEST(RoundingState, ChromaAndPerQpLists) {
  RoundingConfig c = adaptive_config();
  c.chroma = true;
  c.fixed = false;
  RoundingState s(c);
  s.start_picture(true, 40, 36);
  s.update(true, false, adjust_all(0, -2));  // 8x8 chroma: each list position gets 4 additions of -2
  s.start_macroblock(1, false);
  // The update went to the lists of the luma QP (40); chroma quantises from the chroma QP's (36) lists.
  EXPECT_EQ(s.offsets().chroma[0][1][5], kOffsetInterSlice);
  s.start_picture(true, 36, 36);
  EXPECT_EQ(s.offsets().chroma[0][1][5], kOffsetInterSlice);
  s.start_picture(true, 40, 40);
  EXPECT_EQ(s.offsets().chroma[0][1][5], kOffsetInterSlice - 8);
  EXPECT_EQ(s.offsets().chroma[1][1][0], kOffsetInterSlice - 8);
  EXPECT_EQ(s.offsets().chroma[0][0][0], kOffsetInterSlice);  // inter list untouched
}

TEST(RoundingState, WithoutAdaptiveRoundingNothingMoves) {
  RoundingState s;
  s.start_picture(true, 28, 28);
  s.update(false, false, adjust_all(100, 100));
  s.start_macroblock(1, false);
  EXPECT_EQ(s.offsets().luma[0][0], kOffsetInterSlice);
  EXPECT_FALSE(s.chains_macroblocks());
  EXPECT_TRUE(RoundingState(adaptive_config()).chains_macroblocks());
}

TEST(RoundingState, ForwardSkipsFlatBlocks) {
  uint8_t src[16], pred[16];
  for (int i = 0; i < 16; ++i) src[i] = pred[i] = static_cast<uint8_t>(10 * i);
  int lev[16], dc = 0;
  int16_t off[16], adj[16];
  for (int16_t& o : off) o = 682;
  bool flat = false;
  EXPECT_EQ(fwd4x4_adaptive(src, 4, pred, 4, 28, off, 4, 0, lev, &dc, adj, &flat), 0);
  EXPECT_TRUE(flat);
  src[5] += 40;
  fwd4x4_adaptive(src, 4, pred, 4, 28, off, 4, 0, lev, &dc, adj, &flat);
  EXPECT_FALSE(flat);
}

}  // namespace
}  // namespace gme

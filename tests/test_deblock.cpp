// Deblocking filter (common/deblock.h) against values worked out by hand from H.264 clause 8.7 and its tables.
// End-to-end bit-exactness against FFmpeg's decoder is checked by the conformance tests.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "common/deblock.h"
#include "tests/dsp_tables.h"
#include "common/quant.h"

namespace gme {
namespace {

// ---- Tables (spot checks against the printed Tables 8-15, 8-16, 8-17) ----

TEST(DeblockTables, AlphaBetaTable816) {
  EXPECT_EQ(deblock_alpha(0), 0);
  EXPECT_EQ(deblock_alpha(15), 0);
  EXPECT_EQ(deblock_alpha(16), 4);
  EXPECT_EQ(deblock_alpha(24), 12);
  EXPECT_EQ(deblock_alpha(30), 25);
  EXPECT_EQ(deblock_alpha(36), 50);
  EXPECT_EQ(deblock_alpha(40), 80);
  EXPECT_EQ(deblock_alpha(45), 144);
  EXPECT_EQ(deblock_alpha(49), 226);
  EXPECT_EQ(deblock_alpha(50), 255);
  EXPECT_EQ(deblock_alpha(51), 255);
  EXPECT_EQ(deblock_beta(15), 0);
  EXPECT_EQ(deblock_beta(16), 2);
  EXPECT_EQ(deblock_beta(19), 3);
  EXPECT_EQ(deblock_beta(26), 6);
  EXPECT_EQ(deblock_beta(36), 11);
  EXPECT_EQ(deblock_beta(40), 13);
  EXPECT_EQ(deblock_beta(51), 18);
}

TEST(DeblockTables, Tc0Table817) {
  EXPECT_EQ(deblock_tc0(16, 3), 0);
  EXPECT_EQ(deblock_tc0(17, 1), 0);
  EXPECT_EQ(deblock_tc0(17, 3), 1);
  EXPECT_EQ(deblock_tc0(21, 2), 1);
  EXPECT_EQ(deblock_tc0(23, 1), 1);
  EXPECT_EQ(deblock_tc0(31, 3), 3);
  EXPECT_EQ(deblock_tc0(36, 1), 2);
  EXPECT_EQ(deblock_tc0(36, 2), 3);
  EXPECT_EQ(deblock_tc0(36, 3), 4);
  EXPECT_EQ(deblock_tc0(40, 3), 7);
  EXPECT_EQ(deblock_tc0(45, 3), 13);
  EXPECT_EQ(deblock_tc0(51, 1), 13);
  EXPECT_EQ(deblock_tc0(51, 2), 17);
  EXPECT_EQ(deblock_tc0(51, 3), 25);
}

TEST(DeblockTables, ChromaQpTable815) {
  EXPECT_EQ(chroma_qp(0, 0), 0);
  EXPECT_EQ(chroma_qp(29, 0), 29);
  EXPECT_EQ(chroma_qp(30, 0), 29);
  EXPECT_EQ(chroma_qp(34, 0), 32);
  EXPECT_EQ(chroma_qp(39, 0), 35);
  EXPECT_EQ(chroma_qp(45, 0), 38);
  EXPECT_EQ(chroma_qp(51, 0), 39);
  EXPECT_EQ(chroma_qp(28, 12), 36);   // qPI = 40
  EXPECT_EQ(chroma_qp(5, -12), 0);    // clipped at 0
  EXPECT_EQ(chroma_qp(51, 12), 39);   // clipped at 51
}

// ---- Boundary strength ----

MbInfo intra_mb(MbType t = MbType::I4x4) {
  MbInfo m;
  m.type = t;
  m.slice_id = 0;
  return m;
}

MbInfo inter_mb(int ref_id = 7) {
  MbInfo m;
  m.type = MbType::P16x16;
  m.slice_id = 0;
  for (int i = 0; i < 4; ++i) {
    m.ref_idx[i] = 0;
    m.ref_id[i] = ref_id;
  }
  return m;
}

TEST(DeblockBs, IntraGivesFourAtMbEdgesThreeInside) {
  const MbInfo i4 = intra_mb(), i16 = intra_mb(MbType::I16x16), pcm = intra_mb(MbType::IPCM), p = inter_mb();
  EXPECT_EQ(deblock_bs(i4, 3, p, 0, true), 4);
  EXPECT_EQ(deblock_bs(p, 3, i16, 0, true), 4);
  EXPECT_EQ(deblock_bs(pcm, 12, p, 0, true), 4);
  EXPECT_EQ(deblock_bs(i4, 0, i4, 1, false), 3);
  EXPECT_EQ(deblock_bs(i16, 4, i16, 8, false), 3);
}

TEST(DeblockBs, CoefficientsGiveTwo) {
  MbInfo a = inter_mb(), b = inter_mb();
  EXPECT_EQ(deblock_bs(a, 3, b, 0, true), 0);
  a.nonzero_luma_mask = 1 << 3;
  EXPECT_EQ(deblock_bs(a, 3, b, 0, true), 2);
  EXPECT_EQ(deblock_bs(a, 7, b, 4, true), 0);  // another row: block 7 has no coefficients
  a.nonzero_luma_mask = 0;
  b.nonzero_luma_mask = 1 << 4;
  EXPECT_EQ(deblock_bs(a, 7, b, 4, true), 2);
  // Coefficients win over a motion difference.
  b.mv[4] = MV(40, 0);
  EXPECT_EQ(deblock_bs(a, 7, b, 4, true), 2);
  // Internal edge of one macroblock.
  MbInfo c = inter_mb();
  c.nonzero_luma_mask = 1 << 5;
  EXPECT_EQ(deblock_bs(c, 4, c, 5, false), 2);
  EXPECT_EQ(deblock_bs(c, 5, c, 6, false), 2);
  EXPECT_EQ(deblock_bs(c, 6, c, 7, false), 0);
}

TEST(DeblockBs, MotionAndReferencePictures) {
  MbInfo a = inter_mb(), b = inter_mb();
  for (int i = 0; i < 16; ++i) a.mv[i] = b.mv[i] = MV(-13, 22);
  EXPECT_EQ(deblock_bs(a, 3, b, 0, true), 0);
  b.mv[0] = MV(-13 + 3, 22 - 3);  // differences of 3 quarter pels: no edge
  EXPECT_EQ(deblock_bs(a, 3, b, 0, true), 0);
  b.mv[0] = MV(-13 + 4, 22);
  EXPECT_EQ(deblock_bs(a, 3, b, 0, true), 1);
  b.mv[0] = MV(-13, 22 - 4);
  EXPECT_EQ(deblock_bs(a, 3, b, 0, true), 1);
  b.mv[0] = MV(-13, 22);
  // Same vectors, different reference pictures: 1, whatever the indices say.
  b.ref_id[0] = 8;
  EXPECT_EQ(deblock_bs(a, 3, b, 0, true), 1);
  // Different indices that name the same picture (possible across slices): 0.
  b.ref_id[0] = 7;
  b.ref_idx[0] = 2;
  EXPECT_EQ(deblock_bs(a, 3, b, 0, true), 0);
  // ref_id is per 8x8: block 10 (x 2, y 2) lies in 8x8 number 3, block 9 in 8x8 number 2.
  MbInfo c = inter_mb();
  c.ref_id[3] = 9;
  EXPECT_EQ(deblock_bs(c, 9, c, 10, false), 1);
  EXPECT_EQ(deblock_bs(c, 8, c, 9, false), 0);
  EXPECT_EQ(deblock_bs(c, 6, c, 10, false), 1);  // horizontal edge between 8x8 1 and 3
  EXPECT_EQ(deblock_bs(c, 5, c, 9, false), 0);
}

// ---- Single lines, worked by hand (indexA = indexB = 36: alpha 50, beta 11; tC0 2/3/4 for bS 1/2/3) ----

using Line = std::array<uint8_t, 8>;  // p3 p2 p1 p0 q0 q1 q2 q3

Line luma(Line l, int bs, int index = 36) {
  deblock_luma_line(l.data() + 4, 1, bs, deblock_alpha(index), deblock_beta(index), deblock_tc0(index, bs));
  return l;
}

Line chroma(Line l, int bs, int index = 36) {
  deblock_chroma_line(l.data() + 4, 1, bs, deblock_alpha(index), deblock_beta(index), deblock_tc0(index, bs));
  return l;
}

TEST(DeblockLine, LumaNormalFilter) {
  const Line step = {60, 60, 60, 60, 90, 90, 90, 90};
  // delta = (4 * 30 - 30 + 4) >> 3 = 11 before clipping to tc = tC0 + 2.
  EXPECT_EQ(luma(step, 0), step);
  EXPECT_EQ(luma(step, 1), (Line{60, 60, 62, 64, 86, 88, 90, 90}));
  EXPECT_EQ(luma(step, 2), (Line{60, 60, 63, 65, 85, 87, 90, 90}));
  EXPECT_EQ(luma(step, 3), (Line{60, 60, 64, 66, 84, 86, 90, 90}));
  // p2 far from p0 (ap false): p1 kept, tc = tC0 + 1.
  EXPECT_EQ(luma(Line{60, 100, 60, 60, 90, 90, 90, 90}, 1), (Line{60, 100, 60, 63, 87, 88, 90, 90}));
  // Arithmetic shift of a negative value: q1' = 90 + Clip3(-2, 2, (90 + 85 - 180) >> 1 = -3) = 88.
  EXPECT_EQ(luma(Line{80, 80, 80, 80, 90, 90, 90, 90}, 1), (Line{80, 80, 82, 84, 86, 88, 90, 90}));
}

TEST(DeblockLine, LumaThresholdsStopFiltering) {
  EXPECT_EQ(luma(Line{60, 60, 80, 60, 90, 90, 90, 90}, 2), (Line{60, 60, 80, 60, 90, 90, 90, 90}));  // |p1-p0| = 20
  EXPECT_EQ(luma(Line{60, 60, 60, 60, 90, 101, 90, 90}, 2), (Line{60, 60, 60, 60, 90, 101, 90, 90}));  // |q1-q0| = 11
  EXPECT_EQ(luma(Line{60, 60, 60, 60, 110, 110, 110, 110}, 3), (Line{60, 60, 60, 60, 110, 110, 110, 110}));  // 50
  // The same step passes at a higher index (alpha(40) = 80).
  EXPECT_NE(luma(Line{60, 60, 60, 60, 110, 110, 110, 110}, 3, 40), (Line{60, 60, 60, 60, 110, 110, 110, 110}));
  // indexA below 16: alpha 0, nothing is ever filtered.
  EXPECT_EQ(luma(Line{60, 60, 60, 60, 61, 61, 61, 61}, 4, 15), (Line{60, 60, 60, 60, 61, 61, 61, 61}));
}

TEST(DeblockLine, LumaStrongFilter) {
  // |p0 - q0| = 10 < (alpha >> 2) + 2 = 14 and both sides smooth: the 5-tap filters on three samples each side.
  EXPECT_EQ(luma(Line{60, 60, 60, 60, 70, 70, 70, 70}, 4), (Line{60, 61, 63, 64, 66, 68, 69, 70}));
  // |p0 - q0| = 30 >= 14: only p0 and q0 change, by the 3-tap filter.
  EXPECT_EQ(luma(Line{60, 60, 60, 60, 90, 90, 90, 90}, 4), (Line{60, 60, 60, 68, 83, 90, 90, 90}));
  // Smooth p side, rough q side (|q2 - q0| = 11): strong on p, 3-tap on q.
  // q0' = (2 * 70 + 70 + 60 + 2) >> 2 = 68.
  EXPECT_EQ(luma(Line{60, 60, 60, 60, 70, 70, 81, 70}, 4), (Line{60, 61, 63, 64, 68, 70, 81, 70}));
}

TEST(DeblockLine, Chroma) {
  const Line step = {0, 0, 60, 60, 90, 90, 0, 0};
  // bS < 4: tc = tC0 + 1, only p0 / q0 change.
  EXPECT_EQ(chroma(step, 1), (Line{0, 0, 60, 63, 87, 90, 0, 0}));
  EXPECT_EQ(chroma(step, 2), (Line{0, 0, 60, 64, 86, 90, 0, 0}));
  EXPECT_EQ(chroma(step, 3), (Line{0, 0, 60, 65, 85, 90, 0, 0}));
  // bS = 4: p0' = (2 p1 + p0 + q1 + 2) >> 2.
  EXPECT_EQ(chroma(step, 4), (Line{0, 0, 60, 68, 83, 90, 0, 0}));
  EXPECT_EQ(chroma(Line{0, 0, 60, 60, 120, 120, 0, 0}, 4), (Line{0, 0, 60, 60, 120, 120, 0, 0}));  // |60| >= 50
}

// ---- Whole pictures ----

struct TestPicture {
  int mbw, mbh;
  Frame f;
  std::vector<MbInfo> mbs;
  TestPicture(int w, int h) : mbw(w), mbh(h), mbs(static_cast<size_t>(w) * h) {
    f.alloc(16 * w, 16 * h, 16 * w, 16 * h);
    for (MbInfo& m : mbs) m = intra_mb();
  }
  MbInfo& mb(int x, int y) { return mbs[y * mbw + x]; }
  // Fills macroblock (x, y) with flat luma / chroma values.
  void fill(int x, int y, int luma_v, int chroma_v) {
    for (int j = 0; j < 16; ++j) std::memset(f.plane[0].at(16 * x, 16 * y + j), luma_v, 16);
    for (int c = 1; c < 3; ++c)
      for (int j = 0; j < 8; ++j) std::memset(f.plane[c].at(8 * x, 8 * y + j), chroma_v, 8);
  }
  void random(uint32_t seed) {
    std::mt19937 rng(seed);
    for (Plane& p : f.plane)
      for (int y = 0; y < p.height; ++y)
        for (int x = 0; x < p.width; ++x) *p.at(x, y) = static_cast<uint8_t>(100 + rng() % 40);
  }
  std::vector<uint8_t> row(int c, int y) const {
    const Plane& p = f.plane[c];
    return std::vector<uint8_t>(p.at(0, y), p.at(0, y) + p.width);
  }
  void run(const std::vector<SliceDeblockParams>& params, int chroma_offset = 0) {
    deblock_picture(dsp_here().deblock, f, mbs.data(), mbw, mbh, params, chroma_offset);
  }
};

TEST(DeblockPicture, IntraMbEdgeStrongFilter) {
  TestPicture t(2, 1);
  t.fill(0, 0, 60, 100);
  t.fill(1, 0, 70, 100);
  for (MbInfo& m : t.mbs) m.qp = 36;
  t.run({SliceDeblockParams{}});
  std::vector<uint8_t> want(32, 60);
  for (int x = 16; x < 32; ++x) want[x] = 70;
  const uint8_t filtered[6] = {61, 63, 64, 66, 68, 69};
  for (int i = 0; i < 6; ++i) want[13 + i] = filtered[i];
  for (int y = 0; y < 16; ++y) EXPECT_EQ(t.row(0, y), want) << "row " << y;
  // Flat chroma stays flat; the picture's left edge (x = 0) is never a filtered edge.
  EXPECT_EQ(t.row(1, 3), std::vector<uint8_t>(16, 100));
}

TEST(DeblockPicture, DisableIdc1LeavesPictureUntouched) {
  TestPicture t(5, 4);
  t.random(1);
  for (size_t i = 0; i < t.mbs.size(); ++i) {
    t.mbs[i].qp = 20 + static_cast<int>(i) * 3 % 32;
    t.mbs[i].slice_id = static_cast<int>(i / 7);
  }
  const Frame before = t.f;
  t.run(std::vector<SliceDeblockParams>(3, SliceDeblockParams{1, 6, 6}), 4);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(t.f.plane[c].storage, before.plane[c].storage) << "plane " << c;
  // The same picture with idc 0 does change (so the check above can fail).
  t.run(std::vector<SliceDeblockParams>(3, SliceDeblockParams{0, 6, 6}), 4);
  EXPECT_NE(t.f.plane[0].storage, before.plane[0].storage);
  EXPECT_NE(t.f.plane[1].storage, before.plane[1].storage);
}

TEST(DeblockPicture, DisableIdc2KeepsSliceEdges) {
  // Slice 0: macroblock 0, slice 1: macroblock 1. Luma steps at the slice edge (x = 16) and inside macroblock 1
  // at its internal edge x = 20.
  auto make = [](int idc) {
    TestPicture t(2, 1);
    t.fill(0, 0, 60, 100);
    t.fill(1, 0, 70, 110);
    for (int y = 0; y < 16; ++y)
      for (int x = 20; x < 32; ++x) *t.f.plane[0].at(x, y) = 74;
    t.mb(1, 0).slice_id = 1;
    for (MbInfo& m : t.mbs) m.qp = 36;
    t.run({SliceDeblockParams{idc, 0, 0}, SliceDeblockParams{idc, 0, 0}});
    return t;
  };
  const TestPicture on = make(0), idc2 = make(2);
  EXPECT_NE(*on.f.plane[0].at(16, 5), 70);    // slice edge filtered with idc 0
  EXPECT_EQ(*idc2.f.plane[0].at(15, 5), 60);  // ... not with idc 2
  EXPECT_EQ(*idc2.f.plane[0].at(16, 5), 70);
  EXPECT_EQ(*idc2.f.plane[1].at(7, 5), 100);
  EXPECT_EQ(*idc2.f.plane[1].at(8, 5), 110);
  // Internal edge (bS 3, tC0 4): 70 70 | 74 74, delta = (16 + 0 + 4) >> 3 = 2, p1/q1 move by (+-4 + ...) >> 1.
  EXPECT_EQ(*idc2.f.plane[0].at(19, 5), 72);
  EXPECT_EQ(*idc2.f.plane[0].at(20, 5), 72);
}

TEST(DeblockPicture, EdgeUsesOffsetsOfTheQSlice) {
  // qp 36; slice 0 (left) has alpha/beta offsets -6 (indexA 24: alpha 12), slice 1 (right) none (alpha 50). The
  // edge x = 16 belongs to the right macroblock, so a step of 20 is filtered (bS 4, 3-tap since 20 >= 14).
  TestPicture t(2, 1);
  t.fill(0, 0, 60, 100);
  t.fill(1, 0, 80, 100);
  t.mb(1, 0).slice_id = 1;
  for (MbInfo& m : t.mbs) m.qp = 36;
  t.run({SliceDeblockParams{0, -6, -6}, SliceDeblockParams{0, 0, 0}});
  EXPECT_EQ(*t.f.plane[0].at(15, 0), (2 * 60 + 60 + 80 + 2) >> 2);
  EXPECT_EQ(*t.f.plane[0].at(16, 0), (2 * 80 + 80 + 60 + 2) >> 2);
  // Mirror: now the right slice has the negative offsets and the edge is left alone.
  TestPicture u(2, 1);
  u.fill(0, 0, 60, 100);
  u.fill(1, 0, 80, 100);
  u.mb(1, 0).slice_id = 1;
  for (MbInfo& m : u.mbs) m.qp = 36;
  u.run({SliceDeblockParams{0, 0, 0}, SliceDeblockParams{0, -6, -6}});
  EXPECT_EQ(*u.f.plane[0].at(15, 0), 60);
  EXPECT_EQ(*u.f.plane[0].at(16, 0), 80);
}

TEST(DeblockPicture, ChromaQpIsTheAverageOfBothSidesQpc) {
  // Left qp 0, right qp 51: QPc 0 and 39, qPav = 20 -> alpha 7, beta 3. (Averaging luma first would give QPc(26) =
  // 26 -> alpha 15.) Luma averages to 26 (alpha 15, beta 6).
  auto make = [](int chroma_step) {
    TestPicture t(2, 1);
    t.fill(0, 0, 100, 100);
    t.fill(1, 0, 100, 100 + chroma_step);
    t.mb(0, 0).qp = 0;
    t.mb(1, 0).qp = 51;
    t.run({SliceDeblockParams{}});
    return t;
  };
  const TestPicture a = make(10), b = make(5);
  EXPECT_EQ(*a.f.plane[1].at(7, 2), 100);  // |10| >= alpha 7: unchanged
  EXPECT_EQ(*a.f.plane[2].at(8, 2), 110);
  EXPECT_EQ(*b.f.plane[1].at(7, 2), (2 * 100 + 100 + 105 + 2) >> 2);  // bS 4 chroma filter
  EXPECT_EQ(*b.f.plane[2].at(8, 2), (2 * 105 + 105 + 100 + 2) >> 2);
  // chroma_qp_offset moves QPc: with +12 both sides reach 12 and 39 -> qPav 26 -> alpha 15, the step of 10 filters.
  TestPicture c(2, 1);
  c.fill(0, 0, 100, 100);
  c.fill(1, 0, 100, 110);
  c.mb(0, 0).qp = 0;
  c.mb(1, 0).qp = 51;
  c.run({SliceDeblockParams{}}, 12);
  EXPECT_NE(*c.f.plane[1].at(7, 2), 100);
}

TEST(DeblockPicture, InterEdgesFollowMotion) {
  // Two P macroblocks with the same picture, flat halves 60 | 64 (bS 1 at qp 36 filters it; tC0 2).
  auto make = [](MV right_mv, int right_ref) {
    TestPicture t(2, 1);
    t.fill(0, 0, 60, 100);
    t.fill(1, 0, 64, 100);
    t.mb(0, 0) = inter_mb(3);
    t.mb(1, 0) = inter_mb(right_ref);
    for (int i = 0; i < 16; ++i) t.mb(1, 0).mv[i] = right_mv;
    for (MbInfo& m : t.mbs) m.qp = 36;
    t.run({SliceDeblockParams{}});
    return t;
  };
  EXPECT_EQ(*make(MV(3, -3), 3).f.plane[0].at(16, 0), 64);  // bS 0
  // bS 1: delta = (16 - 4 + 4) >> 3 = 2, tc = 2 + 1 + 1 = 4 -> 62 | 62; p1 = 60 + Clip3(-2, 2, (60 + 62 - 120) >> 1).
  const TestPicture moved = make(MV(0, 4), 3);
  EXPECT_EQ(*moved.f.plane[0].at(14, 0), 61);
  EXPECT_EQ(*moved.f.plane[0].at(15, 0), 62);
  EXPECT_EQ(*moved.f.plane[0].at(16, 0), 62);
  EXPECT_EQ(*moved.f.plane[0].at(17, 0), 63);
  // Chroma at bS 1 (tc = 3): chroma is flat here, so unchanged.
  EXPECT_EQ(*moved.f.plane[1].at(8, 0), 100);
  EXPECT_EQ(*make(MV(0, 0), 4).f.plane[0].at(16, 0), 62);  // other reference picture: bS 1
}

}  // namespace
}  // namespace gme

// Motion vector prediction (8.4.1.3) and the P_Skip vector (8.4.1.1) on hand-worked neighbourhoods.
// The current macroblock is (1, 1) of a 3x3-macroblock picture: A = left (0,1), B = above (1,0),
// C = above-right (2,0), D = above-left (0,0).
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "encoder/mvpred.h"

namespace gme {
namespace {

struct Pic {
  std::vector<MbInfo> mbs = std::vector<MbInfo>(9);
  MbInfo cur;
  MvPredContext ctx() const { return MvPredContext{mbs.data(), 3, 3, 1, 1, 0, &cur}; }
  MbInfo& mb(int x, int y) { return mbs[y * 3 + x]; }
};

void set_inter(MbInfo& m, int ref, MV mv, int slice = 0) {
  m.type = MbType::P16x16;
  m.slice_id = slice;
  for (int i = 0; i < 4; ++i) m.ref_idx[i] = static_cast<int8_t>(ref);
  for (int i = 0; i < 16; ++i) m.mv[i] = mv;
}
void set_intra(MbInfo& m, int slice = 0) {
  m.type = MbType::I16x16;
  m.slice_id = slice;
  for (int i = 0; i < 4; ++i) m.ref_idx[i] = -1;
  for (int i = 0; i < 16; ++i) m.mv[i] = MV(0, 0);
}

// A, B, C, D all inter with distinct vectors.
Pic typical(int ra = 0, int rb = 0, int rc = 0) {
  Pic p;
  set_inter(p.mb(0, 1), ra, MV(4, 0));    // A
  set_inter(p.mb(1, 0), rb, MV(8, 4));    // B
  set_inter(p.mb(2, 0), rc, MV(-4, 12));  // C
  set_inter(p.mb(0, 0), 0, MV(100, 100)); // D (only used when C is unavailable)
  return p;
}

TEST(MvPred, MedianOfThree) {
  Pic p = typical();
  EXPECT_EQ(predict_mv(p.ctx(), 0, 0, 4, 4, 0), MV(4, 4));  // median(4, 8, -4), median(0, 4, 12)
}

TEST(MvPred, SingleReferenceMatchTakesThatVector) {
  Pic p = typical(0, 1, 1);
  EXPECT_EQ(predict_mv(p.ctx(), 0, 0, 4, 4, 0), MV(4, 0));  // only A uses ref 0
  EXPECT_EQ(predict_mv(p.ctx(), 0, 0, 4, 4, 1), MV(4, 4));  // B and C use ref 1: median of all three
  Pic q = typical(1, 1, 0);
  EXPECT_EQ(predict_mv(q.ctx(), 0, 0, 4, 4, 0), MV(-4, 12));  // only C
  EXPECT_EQ(predict_mv(q.ctx(), 0, 0, 4, 4, 2), MV(4, 4));    // none: median
}

TEST(MvPred, Directional16x8) {
  Pic p = typical();
  EXPECT_EQ(predict_mv(p.ctx(), 0, 0, 4, 2, 0), MV(8, 4));  // top: B
  EXPECT_EQ(predict_mv(p.ctx(), 0, 2, 4, 2, 0), MV(4, 0));  // bottom: A
  // Top partition whose B uses another reference: the median rule (here single match -> ... A and C match).
  Pic q = typical(0, 1, 0);
  EXPECT_EQ(predict_mv(q.ctx(), 0, 0, 4, 2, 0), MV(4, 4));
  // Bottom partition with A on another reference: A = left MB (ref 1), B = the current top partition (ref 0),
  // C = (4, 1) is the right macroblock (unavailable) -> D = left MB block (3, 1) (ref 1). Only B uses ref 0.
  Pic r = typical(1, 0, 0);
  r.cur.ref_idx[0] = r.cur.ref_idx[1] = 0;
  for (int i = 0; i < 8; ++i) r.cur.mv[i] = MV(20, -20);
  r.mb(0, 1).mv[3 + 4 * 1] = MV(-8, 8);
  EXPECT_EQ(predict_mv(r.ctx(), 0, 2, 4, 2, 0), MV(20, -20));
}

TEST(MvPred, Directional8x16) {
  Pic p = typical();
  EXPECT_EQ(predict_mv(p.ctx(), 0, 0, 2, 4, 0), MV(4, 0));    // left: A
  EXPECT_EQ(predict_mv(p.ctx(), 2, 0, 2, 4, 0), MV(-4, 12));  // right: C (above-right macroblock)
  // Right partition at the right picture edge: C unavailable -> D, the above macroblock's block (1, 3).
  Pic q = typical();
  q.mb(2, 0) = MbInfo{};  // no above-right
  q.mb(1, 0).mv[1 + 4 * 3] = MV(-12, 16);
  EXPECT_EQ(predict_mv(q.ctx(), 2, 0, 2, 4, 0), MV(-12, 16));
}

TEST(MvPred, UnavailableNeighbours) {
  // Left picture edge: A unavailable (ref -1, mv 0); B and C available -> median(0, 8, -4), median(0, 4, 12).
  Pic p = typical();
  p.mb(0, 1) = MbInfo{};
  p.mb(0, 0) = MbInfo{};
  EXPECT_EQ(predict_mv(p.ctx(), 0, 0, 4, 4, 0), MV(0, 4));
  // Only A available (first macroblock row of a slice): its vector whatever its reference.
  Pic q = typical(1);
  q.mb(1, 0) = MbInfo{};
  q.mb(2, 0) = MbInfo{};
  q.mb(0, 0) = MbInfo{};
  EXPECT_EQ(predict_mv(q.ctx(), 0, 0, 4, 4, 0), MV(4, 0));
  // Nothing available: zero.
  Pic r;
  EXPECT_EQ(predict_mv(r.ctx(), 0, 0, 4, 4, 0), MV(0, 0));
  // An intra B is *available* (no substitution by A): median(4, 0, -4) = 0, median(0, 0, 12) = 0.
  Pic s = typical();
  set_intra(s.mb(1, 0));
  EXPECT_EQ(predict_mv(s.ctx(), 0, 0, 4, 4, 0), MV(0, 0));
  // B and C both intra: only A uses ref 0 -> A's vector (the median would have been (0, 0)).
  set_intra(s.mb(2, 0));
  EXPECT_EQ(predict_mv(s.ctx(), 0, 0, 4, 4, 0), MV(4, 0));
}

TEST(MvPred, SliceEdgesAreUnavailable) {
  // B, C and D belong to slice 0, the current macroblock to slice 1: only A (slice 1) is available.
  Pic p = typical();
  set_inter(p.mb(0, 1), 1, MV(4, 0), 1);
  MvPredContext c = p.ctx();
  c.slice_id = 1;
  EXPECT_EQ(predict_mv(c, 0, 0, 4, 4, 0), MV(4, 0));
  // Not yet coded (slice_id -1) above-right: C -> D.
  Pic q = typical();
  q.mb(2, 0).slice_id = -1;
  q.mb(0, 0).mv[15] = MV(-40, 0);
  EXPECT_EQ(predict_mv(q.ctx(), 0, 0, 4, 4, 0), MV(4, 0));  // median(4, 8, -40), median(0, 4, 0)
}

TEST(MvPred, CInsideMacroblockByDecodingOrder) {
  Pic p = typical();
  // 8x8 #0 and #1 decided with distinct vectors.
  p.cur.ref_idx[0] = p.cur.ref_idx[1] = 0;
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x) p.cur.mv[x + 4 * y] = x < 2 ? MV(40, 0) : MV(0, 40);
  p.cur.mv[0 + 4 * 1] = MV(-40, -40);  // block (0,1) distinct, the B of a partition at (0,2)
  // 8x8 #2 at (0,2): A = left MB (3,2) = (4,0); B = cur (0,1) = (-40,-40); C = cur (2,1) = (0,40), decoded.
  EXPECT_EQ(predict_mv(p.ctx(), 0, 2, 2, 2, 0), MV(0, 0));  // median(4,-40,0), median(0,-40,40)
  // 8x8 #3 at (2,2): C = (4,1) is the right macroblock -> D = cur (1,1) = (40,0). A = cur (1,2) undecided
  // state is whatever #2 stored: give it a value.
  p.cur.ref_idx[2] = 0;
  for (int y = 2; y < 4; ++y)
    for (int x = 0; x < 2; ++x) p.cur.mv[x + 4 * y] = MV(8, 8);
  // A = (8,8), B = cur (2,1) = (0,40), D = cur (1,1) = (40,0): median(8,0,40) = 8, median(8,40,0) = 8.
  EXPECT_EQ(predict_mv(p.ctx(), 2, 2, 2, 2, 0), MV(8, 8));
  // 4x4 sub-block 3 of 8x8 #0 at (1,1): C = (2,0) belongs to 8x8 #1, not yet decoded -> D = cur (0,0).
  Pic q = typical();
  q.cur.ref_idx[0] = 0;
  q.cur.mv[0] = MV(-16, 0);   // D
  q.cur.mv[1] = MV(16, 0);    // B
  q.cur.mv[4] = MV(0, 16);    // A
  q.cur.mv[2] = MV(999, 999); // stale state at C's position must not be read
  EXPECT_EQ(predict_mv(q.ctx(), 1, 1, 1, 1, 0), MV(0, 0));  // median(0,16,-16), median(16,0,0)
  // 4x4 sub-block 2 at (0,1): C = (1,0) is sub-block 1, decoded: A = left MB (4,0), B = cur (0,0), C = cur (1,0).
  EXPECT_EQ(predict_mv(q.ctx(), 0, 1, 1, 1, 0), MV(4, 0));  // median(4,-16,16) = 4, median(0,0,0) = 0
}

TEST(MvPred, SkipRules) {
  // A or B unavailable -> (0,0) even if the median is not zero.
  Pic p = typical();
  p.mb(1, 0) = MbInfo{};
  EXPECT_EQ(predict_skip_mv(p.ctx()), MV(0, 0));
  // A ref 0 with zero vector -> (0,0).
  Pic q = typical();
  q.mb(0, 1).mv[3] = MV(0, 0);
  EXPECT_EQ(predict_skip_mv(q.ctx()), MV(0, 0));
  // B ref 0 with zero vector -> (0,0).
  Pic r = typical();
  r.mb(1, 0).mv[12] = MV(0, 0);
  EXPECT_EQ(predict_skip_mv(r.ctx()), MV(0, 0));
  // Zero vector but ref 1: the rule does not apply -> 16x16 prediction for ref 0: only B and C use ref 0.
  Pic s = typical(1);
  s.mb(0, 1).mv[3] = MV(0, 0);
  EXPECT_EQ(predict_skip_mv(s.ctx()), MV(0, 4));  // median(0, 8, -4), median(0, 4, 12)
  // Otherwise the 16x16 predictor.
  Pic t = typical();
  EXPECT_EQ(predict_skip_mv(t.ctx()), MV(4, 4));
  // Intra A is available (not the zero rule): prediction from B and C, A as ref -1.
  Pic u = typical();
  set_intra(u.mb(0, 1));
  EXPECT_EQ(predict_skip_mv(u.ctx()), MV(0, 4));
  // Slice edge above: B unavailable -> (0,0).
  Pic v = typical();
  v.mb(1, 0).slice_id = 3;
  EXPECT_EQ(predict_skip_mv(v.ctx()), MV(0, 0));
}

// MvPredCache against predict_mv: random 3x3-macroblock pictures (inter with per-4x4 vectors and references,
// intra, not yet coded, other slices), every macroblock position, random partially decided current states, every
// partition geometry and a few references.
TEST(MvPred, CacheMatchesPredictMv) {
  uint32_t seed = 12345;
  auto rnd = [&](int n) {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<int>((seed >> 8) % static_cast<uint32_t>(n));
  };
  auto rnd_mv = [&] { return MV(rnd(65) - 32, rnd(65) - 32); };
  // (x, y, w, h) in 4x4 units: 16x16, 16x8, 8x16, 8x8, 8x4, 4x8, 4x4 at every position they take.
  std::vector<std::array<int, 4>> parts = {{0, 0, 4, 4}, {0, 0, 4, 2}, {0, 2, 4, 2}, {0, 0, 2, 4}, {2, 0, 2, 4}};
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      if (!(x & 1) && !(y & 1)) { parts.push_back({x, y, 2, 2}); parts.push_back({x, y, 1, 2}); }
      if (!(x & 1)) parts.push_back({x, y, 2, 1});
      parts.push_back({x, y, 1, 1});
    }
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<MbInfo> mbs(9);
    for (MbInfo& m : mbs) {
      const int kind = rnd(8);
      if (kind == 0) continue;  // not yet coded
      if (kind == 1) set_intra(m);
      else set_inter(m, rnd(3), rnd_mv());
      if (kind >= 2) {
        for (int i = 0; i < 4; ++i) m.ref_idx[i] = static_cast<int8_t>(rnd(3));
        for (int i = 0; i < 16; ++i) m.mv[i] = rnd_mv();
      }
      if (rnd(6) == 0) m.slice_id = 1;
    }
    MbInfo cur;
    cur.type = MbType::P8x8;
    for (int i = 0; i < 4; ++i) cur.ref_idx[i] = static_cast<int8_t>(rnd(4) - 1);
    for (int i = 0; i < 16; ++i) cur.mv[i] = rnd_mv();
    for (int my = 0; my < 3; ++my)
      for (int mx = 0; mx < 3; ++mx) {
        const MvPredContext ctx{mbs.data(), 3, 3, mx, my, 0, &cur};
        const MvPredCache cache(ctx);
        for (const auto& pt : parts)
          for (int ref = 0; ref < 3; ++ref) {
            ASSERT_EQ(cache.predict(pt[0], pt[1], pt[2], pt[3], ref), predict_mv(ctx, pt[0], pt[1], pt[2], pt[3], ref))
                << "trial " << trial << " mb " << mx << "," << my << " part " << pt[0] << "," << pt[1] << " "
                << pt[2] << "x" << pt[3] << " ref " << ref;
            ++checked;
          }
        // The cache reads the current macroblock's state at each call, as mode decision changes it.
        cur.mv[rnd(16)] = rnd_mv();
        cur.ref_idx[rnd(4)] = static_cast<int8_t>(rnd(4) - 1);
        ASSERT_EQ(cache.predict(1, 1, 1, 1, 0), predict_mv(ctx, 1, 1, 1, 1, 0));
      }
  }
  EXPECT_GT(checked, 100000);
}

}  // namespace
}  // namespace gme

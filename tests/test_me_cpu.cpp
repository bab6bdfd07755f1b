// CPU motion estimation of the unmodified run: the fast full search against a brute-force oracle written plainly
// here (every position, every 4x4 SAD from edge-replicated pixels, J compared in 64 bits, ties by spiral index),
// the re-rank source against its oracle, JM's window centre, and the sub-pel refinement against a transcription
// of JM's sub_pel_motion_estimation over mc_luma, with this CPU's function table (tests/test_checkasm.cpp holds its
// entries to the plain ones).
#include <gtest/gtest.h>

#include <algorithm>

#include <climits>
#include <cstddef>
#include <random>
#include <utility>
#include <vector>

#include "common/frame.h"
#include "common/halfpel.h"
#include "common/mc.h"
#include "common/pixel.h"
#include "me/me_fullfast.h"
#include "me/me_sources.h"
#include "me/motion_search.h"
#include "me/subpel_memo.h"
#include "gpu/me_twin.h"
#include "tests/dsp_tables.h"

namespace gme {
namespace {

// One SAD unit per bit of vector: lambdas below are written as multiples of this.
constexpr int kL = 1 << kLambdaBits;

Plane make_plane(int w, int h, std::mt19937& rng, int smooth = 1) {
  Plane p;
  p.alloc(w, h, kLumaPad);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) p.at(x, y)[0] = static_cast<uint8_t>(rng() % 256 / smooth * smooth);
  p.extend_borders();
  return p;
}

int pel(const Plane& p, int x, int y) { return p.row(clip3(0, p.height - 1, y))[clip3(0, p.width - 1, x)]; }

// ---- Oracle -----------------------------------------------------------------------------------------------------
struct Oracle {
  const Plane& cur;
  const Plane& ref;
  int mb_x, mb_y, sr;
  MV centre;
  std::vector<uint32_t> blk;  // [pos][16], pos = (dy + sr) * (2 sr + 1) + dx + sr

  Oracle(const Plane& c, const Plane& r, int mx, int my, int s, MV ctr)
      : cur(c), ref(r), mb_x(mx), mb_y(my), sr(s), centre(ctr) {
    const int w = 2 * sr + 1;
    blk.resize(static_cast<size_t>(w) * w * 16);
    for (int dy = -sr; dy <= sr; ++dy)
      for (int dx = -sr; dx <= sr; ++dx) {
        const int ox = 16 * mb_x + centre.x / 4 + dx, oy = 16 * mb_y + centre.y / 4 + dy;
        uint32_t* out = &blk[(static_cast<size_t>(dy + sr) * w + dx + sr) * 16];
        for (int b = 0; b < 16; ++b) {
          const int bx = 4 * (b & 3), by = 4 * (b >> 2);
          uint32_t s = 0;
          for (int y = 0; y < 4; ++y)
            for (int x = 0; x < 4; ++x)
              s += std::abs(cur.at(16 * mb_x + bx + x, 16 * mb_y + by + y)[0] - pel(ref, ox + bx + x, oy + by + y));
          out[b] = s;
        }
      }
  }
  uint32_t sad(int part, int dx, int dy) const {
    const int w = 2 * sr + 1;
    const uint32_t* b = &blk[(static_cast<size_t>(dy + sr) * w + dx + sr) * 16];
    const PartitionGeometry g = partition_geometry(part);
    uint32_t s = 0;
    for (int y = g.y; y < g.y + g.h; ++y)
      for (int x = g.x; x < g.x + g.w; ++x) s += b[x + 4 * y];
    return s;
  }
  Candidate best(int part, MV pred, int lambda, bool zero_first) const {
    uint64_t bj = UINT64_MAX;
    int brank = INT_MAX;
    Candidate c;
    for (int dy = -sr; dy <= sr; ++dy)
      for (int dx = -sr; dx <= sr; ++dx) {
        const MV mv(centre.x + 4 * dx, centre.y + 4 * dy);
        const uint32_t s = sad(part, dx, dy);
        const uint64_t j = (static_cast<uint64_t>(s) << kLambdaBits) +
                           static_cast<uint64_t>(lambda) * (se_bits(mv.x - pred.x) + se_bits(mv.y - pred.y));
        const int rank = (zero_first && mv == MV(0, 0)) ? -1 : spiral_index(dx, dy);
        if (j < bj || (j == bj && rank < brank)) {
          bj = j;
          brank = rank;
          c.mv = mv;
          c.sad = s;
        }
      }
    return c;
  }
};

// ---- Window centre ------------------------------------------------------------------------------------------------
TEST(MeCpu, WindowCentreRoundingAndClipping) {
  FullFastOptions o;  // RDOptimization != 0, level 4.0
  // JM_INT_DIVIDE: ((p + 2) >> 2) * 4, i.e. nearest full pel with halves upwards.
  EXPECT_EQ(fullfast_window_centre(MV(-6, 2), 32, o), MV(-4, 4));
  EXPECT_EQ(fullfast_window_centre(MV(-2, -3), 32, o), MV(0, -4));
  EXPECT_EQ(fullfast_window_centre(MV(5, -5), 32, o), MV(4, -4));
  EXPECT_EQ(fullfast_window_centre(MV(400, -401), 32, o), MV(400, -400));  // far predictor: followed
  // Level 4.0 vertical limit -2048..2047: the window [c - 128, c + 128] must stay inside.
  EXPECT_EQ(fullfast_window_centre(MV(0, 3000), 32, o), MV(0, 1916));
  EXPECT_EQ(fullfast_window_centre(MV(0, -3000), 32, o), MV(0, -1920));
  // RDOptimization 0: the centre is clipped so that (0,0) stays in the window.
  FullFastOptions lo;
  lo.rdo_low_complexity = true;
  EXPECT_EQ(fullfast_window_centre(MV(400, -401), 32, lo), MV(128, -128));
  EXPECT_EQ(fullfast_window_centre(MV(30, -30), 8, lo), MV(32, -28));  // -7.5 pel rounds up to -7
  EXPECT_EQ(fullfast_window_centre(MV(50, -50), 8, lo), MV(32, -32));
  // Level 3.0 (-1024..1023) with SR 128: JM would clip to 1023 - 512 = 511 (off the full-pel grid); the bound is
  // rounded inwards to 508.
  FullFastOptions l30;
  l30.level_idc = 30;
  EXPECT_EQ(fullfast_window_centre(MV(0, 1000), 128, l30), MV(0, 508));
  EXPECT_EQ(fullfast_window_centre(MV(0, -1000), 128, l30), MV(0, -512));
}

// ---- Fast full search vs oracle -------------------------------------------------------------------------------
void check_against_oracle(const Plane& cur, const Plane& ref, int sr, int lambda, const FullFastOptions& opt,
                          const std::vector<std::pair<int, int>>& mbs, std::mt19937& rng, int pred_range) {
  {
    FullFastSearch src(cur, {&ref}, sr, lambda, dsp_here(), opt);
    for (auto [mx, my] : mbs) {
      const MV pred16(static_cast<int>(rng() % (2 * pred_range + 1)) - pred_range,
                      static_cast<int>(rng() % (2 * pred_range + 1)) - pred_range);
      src.begin_mb(mx, my, 0, pred16);
      const MV centre = src.centre();
      ASSERT_EQ(centre, fullfast_window_centre(pred16, sr, opt));
      const Oracle o(cur, ref, mx, my, sr, centre);
      for (int part = 0; part < kNumPartitions; ++part) {
        // Partition predictors near the 16x16 one, and sometimes far from it.
        const int pr = (part % 3 == 0) ? 4 * sr + 40 : 12;
        const MV pred(pred16.x + static_cast<int>(rng() % (2 * pr + 1)) - pr,
                      pred16.y + static_cast<int>(rng() % (2 * pr + 1)) - pr);
        const Candidate got = src.best(part, pred);
        const Candidate want = o.best(part, pred, lambda, opt.rdo_low_complexity);
        ASSERT_EQ(got.mv, want.mv) << "mb " << mx << "," << my << " part " << part << " sr " << sr;
        ASSERT_EQ(got.sad, want.sad) << "part " << part;
      }
      // Raw table spot checks, including the window corners.
      for (int part : {0, 3, 8, 15, 22, 40})
        for (auto [dx, dy] : {std::pair<int, int>{-sr, -sr}, {sr, sr}, {0, 0}, {sr, -sr}})
          ASSERT_EQ(src.sad_at(part, dx, dy), o.sad(part, dx, dy));
    }
  }
}

TEST(MeCpu, FastFullSearchMatchesOracleRandomFrames) {
  std::mt19937 rng(21);
  const Plane ref = make_plane(64, 48, rng, 8);
  const Plane cur = make_plane(64, 48, rng, 8);
  std::vector<std::pair<int, int>> all;
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x) all.push_back({x, y});
  for (int lambda : {0, 4 * kL, 40 * kL}) {
    check_against_oracle(cur, ref, 6, lambda, FullFastOptions{}, all, rng, 30);
    FullFastOptions lo;
    lo.rdo_low_complexity = true;
    check_against_oracle(cur, ref, 6, lambda, lo, all, rng, 30);
  }
}

TEST(MeCpu, PictureBordersAndVectorsPointingOutside) {
  std::mt19937 rng(22);
  const Plane ref = make_plane(48, 32, rng, 16);
  const Plane cur = make_plane(48, 32, rng, 16);
  // Corner macroblocks with predictors up to 100 pels away: windows entirely outside the picture and padding.
  check_against_oracle(cur, ref, 10, 3 * kL, FullFastOptions{}, {{0, 0}, {2, 0}, {0, 1}, {2, 1}}, rng, 400);
}

TEST(MeCpu, SearchRange1) {
  std::mt19937 rng(23);
  const Plane ref = make_plane(48, 48, rng, 4);
  const Plane cur = make_plane(48, 48, rng, 4);
  check_against_oracle(cur, ref, 1, 2 * kL, FullFastOptions{}, {{0, 0}, {1, 1}, {2, 2}}, rng, 8);
}

TEST(MeCpu, SearchRange128) {
  std::mt19937 rng(24);
  const Plane ref = make_plane(32, 32, rng, 32);
  const Plane cur = make_plane(32, 32, rng, 32);
  // The window (257 x 257) is far larger than the picture: most positions read only replicated borders.
  check_against_oracle(cur, ref, 128, 5 * kL, FullFastOptions{}, {{1, 1}}, rng, 40);
}

// Maximal SADs with a huge lambda saturate the 16-bit screening: the search must fall back to the exact scan
// and still agree with the oracle.
TEST(MeCpu, SaturatedScreeningFallsBackToExactScan) {
  Plane black, white;
  black.alloc(48, 48, kLumaPad);
  white.alloc(48, 48, kLumaPad);
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 48; ++x) white.at(x, y)[0] = 255;
  black.extend_borders();
  white.extend_borders();
  std::mt19937 rng(31);
  check_against_oracle(black, white, 6, 1 << 24, FullFastOptions{}, {{1, 1}, {0, 2}}, rng, 60);
}

// The tie rule: with equal costs the smaller spiral index around the centre wins; with RDOptimization 0 the
// (0,0) vector beats every position of equal cost.
TEST(MeCpu, TieRule) {
  // Reference with horizontal period 8; the current picture is it moved by 4 pels, so SAD 0 at dx = +-4 (and
  // +-12, ...): (-4,0) and (+4,0) tie exactly around a (0,0) predictor; (-4,0) has the smaller spiral index.
  std::mt19937 rng(25);
  Plane ref, cur;
  ref.alloc(64, 64, kLumaPad);
  cur.alloc(64, 64, kLumaPad);
  uint8_t col[8][64];
  for (auto& c : col)
    for (auto& v : c) v = static_cast<uint8_t>(rng());
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) {
      ref.at(x, y)[0] = col[x & 7][y];
      cur.at(x, y)[0] = col[(x + 4) & 7][y];
    }
  ref.extend_borders();
  cur.extend_borders();
  {
    FullFastSearch src(cur, {&ref}, 8, 4 * kL, dsp_here(), FullFastOptions{});
    src.begin_mb(1, 1, 0, MV(0, 0));
    EXPECT_EQ(src.best(0, MV(0, 0)).mv, MV(-16, 0));
    EXPECT_EQ(src.best(0, MV(0, 0)).sad, 0u);
    // Predictor at +4 pel: now (+4,0) costs fewer bits and wins outright.
    EXPECT_EQ(src.best(0, MV(16, 0)).mv, MV(16, 0));
  }
  // Flat pictures: every SAD is 0, the costs are the vector bits alone. Predictor (2, 0) rounds to the centre
  // (4, 0); mv 0 and mv 4 both cost se_bits(+-2) = 5 bits: the centre (index 0) wins, except that with
  // RDOptimization 0 the (0,0) vector is evaluated first and keeps the tie.
  Plane flat_r, flat_c;
  flat_r.alloc(48, 48, kLumaPad);
  flat_c.alloc(48, 48, kLumaPad);
  flat_r.extend_borders();
  flat_c.extend_borders();
  {
    FullFastSearch a(flat_c, {&flat_r}, 4, kL, dsp_here(), FullFastOptions{});
    a.begin_mb(1, 1, 0, MV(2, 0));
    EXPECT_EQ(a.centre(), MV(4, 0));
    EXPECT_EQ(a.best(0, MV(2, 0)).mv, MV(4, 0));
    FullFastOptions lo;
    lo.rdo_low_complexity = true;
    FullFastSearch b(flat_c, {&flat_r}, 4, kL, dsp_here(), lo);
    b.begin_mb(1, 1, 0, MV(2, 0));
    EXPECT_EQ(b.best(0, MV(2, 0)).mv, MV(0, 0));
  }
}

TEST(MeCpu, GlobalShiftFoundExactly) {
  // cur(x, y) = ref(x + 7, y - 3): every block matches at vector (+7, -3) pels. Blocks whose match lies inside
  // the picture must find exactly that vector; at the right and top edges the replicated border makes other
  // vectors match as well (with fewer bits), so there only a zero SAD is required.
  std::mt19937 rng(26);
  const Plane ref = make_plane(96, 64, rng);
  Plane cur;
  cur.alloc(96, 64, kLumaPad);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 96; ++x) cur.at(x, y)[0] = static_cast<uint8_t>(pel(ref, x + 7, y - 3));
  cur.extend_borders();
  auto src = make_fullfast_source(cur, {&ref}, 16, 5 * kL, dsp_here());
  int exact = 0;
  for (int my = 0; my < 4; ++my)
    for (int mx = 0; mx < 6; ++mx) {
      src->begin_mb(mx, my, 0, MV(0, 0));
      for (int part = 0; part < kNumPartitions; ++part) {
        const Candidate c = src->best(part, MV(0, 0));
        const PartitionGeometry g = partition_geometry(part);
        const int x = 16 * mx + 4 * g.x, y = 16 * my + 4 * g.y;
        if (x + 7 + 4 * g.w <= 96 && y - 3 >= 0) {
          ASSERT_EQ(c.mv, MV(28, -12)) << "mb " << mx << "," << my << " part " << part;
          ++exact;
        }
        ASSERT_EQ(c.sad, 0u);
      }
    }
  EXPECT_GT(exact, 600);  // most of the 24 * 41 partitions
}

TEST(MeCpu, InterleavedReferencesKeepTheirTables) {
  std::mt19937 rng(27);
  const Plane cur = make_plane(48, 48, rng, 8);
  const Plane r0 = make_plane(48, 48, rng, 8);
  const Plane r1 = make_plane(48, 48, rng, 8);
  FullFastSearch src(cur, {&r0, &r1}, 5, kL, dsp_here(), FullFastOptions{});
  const Oracle o0(cur, r0, 1, 1, 5, MV(4, 0)), o1(cur, r1, 1, 1, 5, MV(-8, 4));
  src.begin_mb(1, 1, 0, MV(4, 0));
  src.begin_mb(1, 1, 1, MV(-8, 4));
  EXPECT_EQ(src.best(3, MV(0, 0)).mv, o1.best(3, MV(0, 0), kL, false).mv);
  src.begin_mb(1, 1, 0, MV(4, 0));  // switch back: same table
  EXPECT_EQ(src.best(3, MV(0, 0)).mv, o0.best(3, MV(0, 0), kL, false).mv);
  EXPECT_EQ(src.best(30, MV(8, 8)).mv, o0.best(30, MV(8, 8), kL, false).mv);
}

// ---- The plain screening kernel's own promise ------------------------------------------------------------------
// Its minimum is the true minimum of the saturated sums (tests/test_checkasm.cpp holds the SIMD kernels to it).
TEST(MeCpu, PlainScreenFindsTheMinimum) {
  std::mt19937 rng(33);
  const FullFastKernels& plain = dsp_plain().fullfast;
  for (int width : {3, 13, 65, 257}) {
    const int stride = (width + 15) & ~15;
    for (int rep = 0; rep < 5; ++rep) {
      std::vector<uint16_t> sad(static_cast<size_t>(width) * stride, 0xFFFF), hx(stride, 0xFFFF), hy(width);
      for (int r = 0; r < width; ++r)
        for (int c = 0; c < width; ++c)
          sad[r * stride + c] = static_cast<uint16_t>(rep == 4 ? 65530 + rng() % 6 : rng() % 40);
      for (int c = 0; c < width; ++c) hx[c] = static_cast<uint16_t>(rng() % (rep == 3 ? 3000 : 12));
      for (int r = 0; r < width; ++r) hy[r] = static_cast<uint16_t>(rng() % 12);
      std::vector<int> cand(static_cast<size_t>(width) * stride);
      int n = 0;
      const uint32_t q = plain.screen(sad.data(), width, stride, hx.data(), hy.data(), cand.data(), &n);
      uint32_t truth = 0xFFFF;
      for (int r = 0; r < width; ++r)
        for (int c = 0; c < width; ++c)
          truth = std::min<uint32_t>(truth, std::min(0xFFFF, sad[r * stride + c] + hx[c] + hy[r]));
      ASSERT_EQ(q, truth) << "width " << width << " rep " << rep;
    }
  }
}

// ---- Re-rank source ------------------------------------------------------------------------------------------
// With the order of the picture-level search known (ranked by cost at a predictor), the shortcut for an exact
// predictor equal to it must return what the full re-ranking returns, ties included.
TEST(MeCpu, RerankShortcutMatchesFullRerank) {
  std::mt19937 rng(31);
  const int mbw = 2, mbs = 4, k = 8, refs = 2;
  const int lambda = kL;
  PictureCandidates pc;
  pc.resize(refs, mbs, k);
  std::vector<MV> ranked(static_cast<size_t>(refs) * mbs);
  for (auto& m : ranked) m = MV(4 * (static_cast<int>(rng() % 5) - 2), 4 * (static_cast<int>(rng() % 5) - 2));
  for (int ref = 0; ref < refs; ++ref)
    for (int mb = 0; mb < mbs; ++mb)
      for (int part = 0; part < kNumPartitions; ++part) {
        Candidate* c = pc.at(ref, mb, part);
        for (int i = 0; i < k; ++i) {
          c[i].mv = MV(4 * (static_cast<int>(rng() % 9) - 4), 4 * (static_cast<int>(rng() % 9) - 4));
          c[i].sad = rng() % 4;  // many equal costs
        }
        const MV rp = ranked[static_cast<size_t>(ref) * mbs + mb];
        std::stable_sort(c, c + k, [&](const Candidate& a, const Candidate& b) {
          return motion_cost(a.sad, lambda, a.mv, rp) < motion_cost(b.sad, lambda, b.mv, rp);
        });
      }
  auto full = make_rerank_source(pc, mbw, lambda);
  auto fast = make_rerank_source(pc, mbw, lambda, ranked);
  int shortcuts = 0;
  for (int ref = 0; ref < refs; ++ref)
    for (int mb = 0; mb < mbs; ++mb) {
      full->begin_mb(mb % mbw, mb / mbw, ref, MV(0, 0));
      fast->begin_mb(mb % mbw, mb / mbw, ref, MV(0, 0));
      for (int part = 0; part < kNumPartitions; ++part) {
        const MV rp = ranked[static_cast<size_t>(ref) * mbs + mb];
        const MV pred = rng() % 2 ? rp : MV(static_cast<int>(rng() % 17) - 8, static_cast<int>(rng() % 17) - 8);
        shortcuts += pred == rp;
        const Candidate a = full->best(part, pred), b = fast->best(part, pred);
        ASSERT_EQ(a.mv, b.mv) << ref << " " << mb << " " << part;
        ASSERT_EQ(a.sad, b.sad);
      }
    }
  EXPECT_GT(shortcuts, 50);
}

// A progressive answer (PictureSearchRequest::progressive): the source asks for a row before it reads it, and
// only when the rows it was told are ready do not cover it.
TEST(MeCpu, RerankSourceWaitsForEachRowBeforeReadingIt) {
  struct Landing final : PictureIntegerSearch {
    int landed = 0, calls = 0, step = 1;
    void search(const PictureSearchRequest&, PictureCandidates&) override {}
    const char* name() const override { return "landing"; }
    int wait_rows(int rows) override {
      ++calls;
      landed = std::max(landed, rows + step - 1);  // a band of `step` rows lands at once
      return landed;
    }
  };
  const int mbw = 3, mbh = 7, refs = 2;
  PictureCandidates pc;
  pc.resize(refs, mbw * mbh, 2);
  for (int step : {1, 3}) {
    Landing landing;
    landing.step = step;
    double waited = 0;
    auto src = make_rerank_source(pc, mbw, kL, std::vector<MV>(), ProgressiveAnswer{&landing, &waited});
    for (int y = 0; y < mbh; ++y)
      for (int x = 0; x < mbw; ++x)
        for (int ref = 0; ref < refs; ++ref) {
          src->begin_mb(x, y, ref, MV(0, 0));
          ASSERT_GT(landing.landed, y) << "row " << y << " read before it landed";
          src->best(0, MV(0, 0));
        }
    EXPECT_EQ(landing.calls, (mbh + step - 1) / step) << "one wait per band";
  }
}

TEST(MeCpu, RerankSourceMatchesOracle) {
  std::mt19937 rng(28);
  const int mbw = 3, mbs = 6, k = 8, refs = 2;
  PictureCandidates pc;
  pc.resize(refs, mbs, k);
  for (auto& c : pc.data) {
    c.mv = MV(4 * (static_cast<int>(rng() % 9) - 4), 4 * (static_cast<int>(rng() % 9) - 4));
    c.sad = rng() % 6;  // small SADs: many exact ties
  }
  pc.at(1, 4, 7)[5].sad = UINT32_MAX;  // an empty slot is never chosen
  const int lambda = kL;
  auto src = make_rerank_source(pc, mbw, lambda);
  int ties = 0;
  for (int ref = 0; ref < refs; ++ref)
    for (int mb = 0; mb < mbs; ++mb) {
      src->begin_mb(mb % mbw, mb / mbw, ref, MV(0, 0));
      for (int part = 0; part < kNumPartitions; ++part) {
        const MV pred(static_cast<int>(rng() % 17) - 8, static_cast<int>(rng() % 17) - 8);
        const Candidate* c = pc.at(ref, mb, part);
        int best = -1;
        uint64_t bj = 0;
        for (int i = 0; i < k; ++i) {
          if (c[i].sad == UINT32_MAX) continue;
          const uint64_t bits = se_bits(c[i].mv.x - pred.x) + se_bits(c[i].mv.y - pred.y);
          const uint64_t j = (static_cast<uint64_t>(c[i].sad) << kLambdaBits) + static_cast<uint64_t>(lambda) * bits;
          if (best >= 0 && j == bj) ++ties;
          if (best < 0 || j < bj) { best = i; bj = j; }
        }
        const Candidate got = src->best(part, pred);
        ASSERT_EQ(got.mv, c[best].mv);
        ASSERT_EQ(got.sad, c[best].sad);
      }
    }
  EXPECT_GT(ties, 0);  // the data did exercise the stored-order tie rule
}

// ---- Sub-pel refinement ----------------------------------------------------------------------------------------
// JM's sub_pel_motion_estimation transcribed over mc_luma and the reference pixel functions.
MotionResult subpel_oracle(const Candidate& ic, int part, MV pred, const Plane& cur, const Plane& ref, int mx, int my,
                           const MotionSearchParams& p) {
  const PixelFuncs& px = pixel_ref();
  const PartitionGeometry g = partition_geometry(part);
  const int bx = 16 * mx + 4 * g.x, by = 16 * my + 4 * g.y, w = 4 * g.w, h = 4 * g.h;
  int bs = 0;
  for (int s = 0; s < kNumBlockSizes; ++s)
    if (kBlockW[s] == w && kBlockH[s] == h) bs = s;
  auto dist = [&](int metric, MV mv) -> int64_t {
    uint8_t buf[16 * 16];
    mc_luma(buf, 16, ref, bx, by, mv, w, h);
    const uint8_t* o = cur.at(bx, by);
    const uint32_t d = metric ? px.satd[bs](o, cur.stride, buf, 16) : px.sad[bs](o, cur.stride, buf, 16);
    return static_cast<int64_t>(d) << kLambdaBits;
  };
  auto bits = [&](int lambda, MV mv) {
    return static_cast<int64_t>(lambda) * (se_bits(mv.x - pred.x) + se_bits(mv.y - pred.y));
  };
  const int sp[9][2] = {{0, 0}, {0, -1}, {0, 1}, {-1, -1}, {1, -1}, {-1, 0}, {1, 0}, {-1, 1}, {1, 1}};
  MotionResult r{ic.mv, pred, (static_cast<int64_t>(ic.sad) << kLambdaBits) + bits(p.lambda_factor_fpel, ic.mv)};
  if (p.disable_subpel) return r;
  const int start_hp = p.hpel_metric == 0 ? 1 : 0, start_qp = p.hpel_metric == p.qpel_metric ? 1 : 0;
  int64_t minc = start_hp ? r.cost : INT64_MAX;
  MV centre = ic.mv, best = ic.mv;
  for (int i = start_hp; i < 9; ++i) {
    const MV c(centre.x + 2 * sp[i][0], centre.y + 2 * sp[i][1]);
    int64_t cost = bits(p.lambda_factor_hpel, c) + dist(p.hpel_metric, c);
    if (i == 0 && p.zero_mv_bonus && ic.mv == MV(0, 0)) cost -= 16ll * p.lambda_factor_hpel;
    if (cost < minc) { minc = cost; best = c; }
  }
  if (!start_qp) minc = INT64_MAX;
  centre = best;
  for (int i = start_qp; i < 9; ++i) {
    const MV c(centre.x + sp[i][0], centre.y + sp[i][1]);
    const int64_t cost = bits(p.lambda_factor_qpel, c) + dist(p.qpel_metric, c);
    if (cost < minc) { minc = cost; best = c; }
  }
  r.mv = best;
  r.cost = minc;
  return r;
}

// A current picture whose macroblock (mx, my) is `ref` interpolated at quarter-pel vector mv(mx, my), plus noise
// of +-3: sub-pel positions matter, and the true vector is not exactly a winner.
template <typename MvOf>
Plane interpolated_current(const Plane& ref, MvOf mv, std::mt19937& rng) {
  Plane cur;
  cur.alloc(ref.width, ref.height, kLumaPad);
  for (int my = 0; my < ref.height / 16; ++my)
    for (int mx = 0; mx < ref.width / 16; ++mx)
      mc_luma(cur.at(16 * mx, 16 * my), cur.stride, ref, 16 * mx, 16 * my, mv(mx, my), 16, 16);
  for (int y = 0; y < ref.height; ++y)
    for (int x = 0; x < ref.width; ++x) cur.at(x, y)[0] = clip_pixel(cur.at(x, y)[0] + static_cast<int>(rng() % 7) - 3);
  cur.extend_borders();
  return cur;
}

TEST(MeCpu, SubpelRefinementMatchesJmTranscription) {
  std::mt19937 rng(29);
  const Plane ref = make_plane(48, 48, rng, 1);
  const Plane cur = interpolated_current(ref, [](int, int) { return MV(5, -3); }, rng);
  const int metrics[3][2] = {{2, 2}, {0, 0}, {0, 2}};
  HalfpelPlanes planes;  // the precomputed-planes path (with the memo, as the encoder runs it) must agree too
  build_halfpel_planes(dsp_here().halfpel, ref, &planes);
  DistortionMemo memo;
  for (auto& m : metrics)
    for (bool disable : {false, true})
      for (bool bonus : {false, true})
        for (bool use_planes : {false, true}) {
          MotionSearchParams p{3 * kL, 3 * kL + 7, 2 * kL + 5, m[0], m[1], disable};
          p.zero_mv_bonus = bonus;
          p.planes = use_planes ? &planes : nullptr;
          p.memo = use_planes ? &memo : nullptr;
          auto src = make_fullfast_source(cur, {&ref}, 4, p.lambda_factor_fpel, dsp_here());
          for (int my = 0; my < 3; ++my)
            for (int mx = 0; mx < 3; ++mx) {
              src->begin_mb(mx, my, 0, MV(0, 0));
              for (int part = 0; part < kNumPartitions; ++part) {
                const MV pred(static_cast<int>(rng() % 13) - 6, static_cast<int>(rng() % 13) - 6);
                const Candidate ic = src->best(part, pred);
                const MotionResult got = motion_search_partition(*src, part, pred, cur.at(16 * mx, 16 * my), cur.stride,
                                                                 ref, 16 * mx, 16 * my, p, dsp_here());
                const MotionResult want = subpel_oracle(ic, part, pred, cur, ref, mx, my, p);
                ASSERT_EQ(got.mv, want.mv) << "part " << part << " metrics " << m[0] << m[1] << " planes "
                                           << use_planes;
                ASSERT_EQ(got.cost, want.cost) << "part " << part;
                ASSERT_EQ(got.pred, pred);
              }
            }
        }
}

TEST(MeCpu, SubpelFindsInterpolatedShiftExactly) {
  // Noise-free current = reference interpolated at (+5, -3) quarter pel (well inside the picture): the refinement
  // must land on it with zero distortion; the integer stage finds (4, -4) next to it.
  std::mt19937 rng(30);
  const Plane ref = make_plane(64, 64, rng, 1);
  Plane cur;
  cur.alloc(64, 64, kLumaPad);
  mc_luma(cur.at(16, 16), cur.stride, ref, 16, 16, MV(5, -3), 16, 16);
  cur.extend_borders();
  auto src = make_fullfast_source(cur, {&ref}, 8, kL, dsp_here());
  src->begin_mb(1, 1, 0, MV(4, -4));
  MotionSearchParams p{kL, kL, kL, 2, 2, false};
  const MotionResult r = motion_search_partition(*src, 0, MV(4, -4), cur.at(16, 16), cur.stride, ref, 16, 16, p,
                                                 dsp_here());
  EXPECT_EQ(r.mv, MV(5, -3));
  EXPECT_EQ(r.cost, static_cast<int64_t>(kL) * (se_bits(1) + se_bits(1)));  // distortion 0, mvd (1, 1)
}

// JM's check_position0: identical pictures, zero vector, zero predictor. The half-pel centre costs
// 2 bits * lambda_h + 0 - 16 * lambda_h < 0 (JM's distblk is signed); no later candidate can beat a negative cost.
TEST(MeCpu, ZeroVectorBonusMakesTheCostNegative) {
  std::mt19937 rng(32);
  const Plane ref = make_plane(48, 48, rng, 1);
  const int lh = 3 * kL + 11;
  MotionSearchParams p{kL, lh, 2 * kL, 2, 2, false};
  p.zero_mv_bonus = true;
  auto src = make_fullfast_source(ref, {&ref}, 4, p.lambda_factor_fpel, dsp_here());
  src->begin_mb(1, 1, 0, MV(0, 0));
  const MotionResult r = motion_search_partition(*src, 0, MV(0, 0), ref.at(16, 16), ref.stride, ref, 16, 16, p,
                                                 dsp_here());
  EXPECT_EQ(r.mv, MV(0, 0));
  EXPECT_EQ(r.cost, static_cast<int64_t>(lh) * (2 - 16));
  p.zero_mv_bonus = false;
  const MotionResult q = motion_search_partition(*src, 0, MV(0, 0), ref.at(16, 16), ref.stride, ref, 16, 16, p,
                                                 dsp_here());
  EXPECT_EQ(q.mv, MV(0, 0));
  EXPECT_EQ(q.cost, static_cast<int64_t>(lh) * 2);
}

// Sub-pel tables (me_interface.h SubpelTable) computed with the picture-level search: the refinement that reads
// them must decide exactly as the JM transcription that measures every position itself, for both metrics, and
// must actually read them (a partition whose chosen vector is the first candidate gets its table). The noisy
// picture makes rows whose entries pass 254 above their minimum, escaped in the table, near the winners too.
TEST(MeCpu, SubpelTablesGiveTheOraclesDecisions) {
  std::mt19937 rng(61);
  const Plane ref = make_plane(64, 48, rng, 1);
  const Plane cur = interpolated_current(ref, [](int mx, int my) { return MV(7 - 5 * mx, -3 + 3 * my); }, rng);
  const int metrics[3][2] = {{2, 2}, {0, 0}, {0, 2}};
  for (auto& m : metrics) {
    MotionSearchParams p{3 * kL, 3 * kL + 7, 2 * kL + 5, m[0], m[1], false};
    PictureSearchRequest req = centred_request(cur, {&ref}, 5, 3, p.lambda_factor_fpel);
    req.subpel_metric = m[1];
    PictureCandidates cands;
    TwinPictureSearch(dsp_here()).search(req, cands);
    ASSERT_EQ(cands.subpel_metric, m[1]);
    auto src = make_rerank_source(cands, 4, p.lambda_factor_fpel);
    int with_table = 0, escapes = 0;
    for (int mb = 0; mb < 12; ++mb) {
      const int mx = mb % 4, my = mb / 4;
      src->begin_mb(mx, my, 0, MV(0, 0));
      for (int part = 0; part < kNumPartitions; ++part) {
        const MV pred = part % 3 ? MV(static_cast<int>(rng() % 13) - 6, static_cast<int>(rng() % 13) - 6) : MV(0, 0);
        const Candidate ic = src->best(part, pred);
        with_table += src->subpel(part, ic.mv, m[1]) != nullptr;
        EXPECT_EQ(src->subpel(part, ic.mv, 2 - m[1]), nullptr);  // a metric the tables were not made in
        const MotionResult got = motion_search_partition(*src, part, pred, cur.at(16 * mx, 16 * my), cur.stride, ref,
                                                         16 * mx, 16 * my, p, dsp_here());
        const MotionResult want = subpel_oracle(ic, part, pred, cur, ref, mx, my, p);
        ASSERT_EQ(got.mv, want.mv) << "part " << part << " mb " << mb << " metrics " << m[0] << m[1];
        ASSERT_EQ(got.cost, want.cost) << "part " << part << " mb " << mb;
        escapes += got.table_escape;
      }
    }
    EXPECT_GT(with_table, 12 * kNumPartitions / 2);
    EXPECT_GT(escapes, 0) << "metrics " << m[0] << m[1];
  }
}

// The refinement takes its distortions from the table when it has one: a table that says the best position is
// (+3, -1) quarter pels from the integer vector leads it there, whatever the pixels say; so do (0, +3) and (+3, +3),
// whose quarter-pel rings lie in the rows' far parts.
TEST(MeCpu, SubpelTableDrivesTheRefinement) {
  std::mt19937 rng(62);
  const Plane ref = make_plane(48, 48, rng, 1);
  const Plane cur = make_plane(48, 48, rng, 1);
  const PictureSearchRequest req = centred_request(cur, {&ref}, 3, 1, kL);
  PictureCandidates cands;
  TwinPictureSearch(dsp_here()).search(req, cands);
  for (const MV best : {MV(3, -1), MV(0, 3), MV(3, 3)}) {
    cands.subpel_metric = 2;
    cands.subpel_ranks = 1;
    cands.subpel.assign(9, SubpelTable{});
    uint32_t row[kSubpelOffsets];  // within 254 of the row's minimum: every entry exact
    for (int oy = -3; oy <= 3; ++oy)
      for (int ox = -3; ox <= 3; ++ox)
        row[subpel_slot(ox, oy)] = static_cast<uint32_t>(5000 + 20 * (std::abs(ox - best.x) + std::abs(oy - best.y)));
    for (SubpelTable& t : cands.subpel)
      for (int part = 0; part < kNumPartitions; ++part) t.set_row(part, row);
    auto src = make_rerank_source(cands, 3, kL);
    const MotionSearchParams p{kL, kL, kL, 2, 2, false};
    src->begin_mb(1, 1, 0, MV(0, 0));
    for (int part : {0, 3, 12, 40}) {
      const Candidate ic = src->best(part, MV(0, 0));
      const MotionResult r =
          motion_search_partition(*src, part, MV(0, 0), cur.at(16, 16), cur.stride, ref, 16, 16, p, dsp_here());
      EXPECT_EQ(r.mv, MV(ic.mv.x + best.x, ic.mv.y + best.y)) << "part " << part << ", best " << best.x << "," << best.y;
    }
  }
}

// The table row order (me_interface.h kSubpelSlots): a permutation of the 49 offsets over slots 0..48, the half-pel
// stage's 9 positions first, and the near part (28 slots, with the row's base half a cache line) holding every
// offset a refinement reads when its half-pel winner is (0,0), (-2,0) or (2,0).
TEST(SubpelSlots, PermutationWithTheCommonRefinementsInTheFirstLine) {
  std::vector<int> seen(kSubpelOffsets, 0);
  for (int oi = 0; oi < kSubpelOffsets; ++oi) {
    const int s = kSubpelSlots.slot_of_offset[oi];
    ASSERT_GE(s, 0);
    ASSERT_LT(s, kSubpelOffsets);
    ++seen[s];
    EXPECT_EQ(kSubpelSlots.offset_of_slot[s], oi);
  }
  for (int s = 0; s < kSubpelOffsets; ++s) EXPECT_EQ(seen[s], 1) << "slot " << s;
  for (int hy = -2; hy <= 2; hy += 2)
    for (int hx = -2; hx <= 2; hx += 2) EXPECT_LT(subpel_slot(hx, hy), 9) << hx << "," << hy;
  for (const auto& h : {std::pair<int, int>{0, 0}, {-2, 0}, {2, 0}})
    for (int qy = -1; qy <= 1; ++qy)
      for (int qx = -1; qx <= 1; ++qx)
        EXPECT_LT(subpel_slot(h.first + qx, h.second + qy), kSubpelNearSlots) << h.first + qx << "," << h.second + qy;
  // Every row's base and near part within one cache line: tables 64-byte aligned, rows of 32 bytes from the
  // table's start.
  EXPECT_EQ(alignof(SubpelTable) % 64, 0u);
  EXPECT_EQ(offsetof(SubpelTable, row), 0u);
  EXPECT_EQ(sizeof(SubpelTable::row[0]), 32u);
}

// A table row keeps its minimum whole (32 bits: 16x16's SATD passes 65535) and every entry up to 254 above it
// exactly; entries from 255 above are escaped and read as that bound. Rows do not touch each other.
TEST(SubpelTableRow, ExactWithin254OfTheMinimumEscapedBeyond) {
  SubpelTable t{};
  for (int part : {0, 7, 40}) {
    const uint32_t base = part == 0 ? 100000 : 60000 - part;
    uint32_t row[kSubpelOffsets];
    for (int s = 0; s < kSubpelOffsets; ++s) row[s] = base + static_cast<uint32_t>((s * 37 + part) % 400);
    row[(part + 5) % kSubpelOffsets] = base;  // one entry at the minimum, wherever it lies
    t.set_row(part, row);
    EXPECT_EQ(t.row_base(part), base) << part;
    for (int s = 0; s < kSubpelOffsets; ++s) {
      const uint32_t excess = row[s] - base;
      EXPECT_EQ(t.exact(part, s), excess <= 254) << part << " " << s;
      EXPECT_EQ(t.slot(part, s), excess <= 254 ? row[s] : base + 255) << part << " " << s;
      EXPECT_EQ(t.at(part, kSubpelSlots.offset_of_slot[s]), t.slot(part, s));
    }
  }
  EXPECT_EQ(t.row_base(1), 0u);  // untouched rows stay as they were
  for (int s = 0; s < kSubpelOffsets; ++s) EXPECT_EQ(t.slot(1, s), 0u);
}

}  // namespace
}  // namespace gme

#include "me/motion_search.h"

#include <cstdint>
#include <cstring>

#include "common/halfpel.h"
#include "me/subpel_memo.h"

namespace gme {
namespace {

// JM's spiral of radius 1 (mv_search.c): centre, (0,-1), (0,1), (-1,-1), (1,-1), (-1,0), (1,0), (-1,1), (1,1).
constexpr int kSpiral[9][2] = {{0, 0}, {0, -1}, {0, 1}, {-1, -1}, {1, -1}, {-1, 0}, {1, 0}, {-1, 1}, {1, 1}};

BlockSize block_size_of(int w, int h) {
  if (w == 16) return h == 16 ? kB16x16 : kB16x8;
  if (w == 8) return h == 16 ? kB8x16 : (h == 8 ? kB8x8 : kB8x4);
  return h == 8 ? kB4x8 : kB4x4;
}

// Full-, half- and centre-pel samples of the region [X-1, X+w] x [Y-1, Y+h] around an integer block position:
// every quarter-pel position within +-3/4 pel of it is one of these or the rounded average of two
// (8.4.2.2.1), so the 17 candidates of the refinement cost one 6-tap pass over a (w+2) x (h+2) region instead of
// one interpolation each. Planes are indexed from the region's top-left (X-1, Y-1); rows are kW bytes apart.
class SubpelRegion {
 public:
  static constexpr int kW = 32;  // row stride: 16 + 2 region columns, rounded up for whole-vector loads/stores
  static constexpr int kRows = 16 + 7;

  SubpelRegion(const SubpelRegion&) = delete;  // points into itself when built locally
  SubpelRegion& operator=(const SubpelRegion&) = delete;

  // From the reference's precomputed planes (common/halfpel.h): no interpolation here.
  SubpelRegion(const HalfpelPlanes& planes, int X, int Y, int w, int h)
      : bw_(w), bh_(h), stride_(planes.g.stride), gp_(planes.g.at(X - 1, Y - 1)), bp_(planes.b.at(X - 1, Y - 1)),
        hp_(planes.h.at(X - 1, Y - 1)), jp_(planes.j.at(X - 1, Y - 1)) {}

  // Built locally (blocks beyond the planes, or no planes): the same sample kinds over the region only.
  SubpelRegion(const HalfpelFuncs& f, const Plane& ref, int X, int Y, int w, int h)
      : bw_(w), bh_(h), stride_(kW), gp_(&g_[0][0]), bp_(&b_[0][0]), hp_(&h_[0][0]), jp_(&j_[0][0]) {
    build_halfpel_region(f, ref, X - 1, Y - 1, w + 2, h + 2, kW, &g_[0][0], &b_[0][0], &h_[0][0], &j_[0][0]);
  }

  // Plane pointers (row stride stride_) of the sample kinds, at region position (r, c).
  const uint8_t* g(int r, int c) const { return gp_ + r * stride_ + c; }
  const uint8_t* b(int r, int c) const { return bp_ + r * stride_ + c; }
  const uint8_t* hh(int r, int c) const { return hp_ + r * stride_ + c; }
  const uint8_t* j(int r, int c) const { return jp_ + r * stride_ + c; }

  // The prediction at quarter-pel offset (ox, oy) in [-3, 3] from the integer position: either a plane pointer
  // (row stride kW, no copy) or the average of two (avg) written to buf (row stride 16).
  const uint8_t* predict(AvgRowsFn avg, int ox, int oy, uint8_t* buf, int* stride) const {
    const int fx = ox & 3, fy = oy & 3, c = (ox >> 2) + 1, r = (oy >> 2) + 1;
    const uint8_t *p1, *p2 = nullptr;
    switch (fy * 4 + fx) {                            // Table 8-12 names
      case 0: p1 = g(r, c); break;                    // G
      case 1: p1 = g(r, c); p2 = b(r, c); break;      // a
      case 2: p1 = b(r, c); break;                    // b
      case 3: p1 = g(r, c + 1); p2 = b(r, c); break;  // c
      case 4: p1 = g(r, c); p2 = hh(r, c); break;     // d
      case 5: p1 = b(r, c); p2 = hh(r, c); break;     // e
      case 6: p1 = b(r, c); p2 = j(r, c); break;      // f
      case 7: p1 = b(r, c); p2 = hh(r, c + 1); break; // g
      case 8: p1 = hh(r, c); break;                   // h
      case 9: p1 = hh(r, c); p2 = j(r, c); break;     // i
      case 10: p1 = j(r, c); break;                   // j
      case 11: p1 = j(r, c); p2 = hh(r, c + 1); break;// k
      case 12: p1 = g(r + 1, c); p2 = hh(r, c); break;// n
      case 13: p1 = hh(r, c); p2 = b(r + 1, c); break;// p
      case 14: p1 = j(r, c); p2 = b(r + 1, c); break; // q
      default: p1 = hh(r, c + 1); p2 = b(r + 1, c); break;  // r
    }
    if (!p2) {
      *stride = stride_;
      return p1;
    }
    // Rows hold at least kW bytes, so the 16-byte row reads avg may make stay inside the planes.
    avg(buf, 16, p1, p2, stride_, bw_, bh_);
    *stride = 16;
    return buf;
  }

 private:
  int bw_, bh_;
  int stride_;
  const uint8_t *gp_, *bp_, *hp_, *jp_;
  // Local planes: rows 0..h+1 and columns 0..w+1 written; rows are kW bytes so the 16-byte averaging loads stay
  // inside them.
  uint8_t g_[kRows][kW], b_[kRows][kW], h_[kRows][kW], j_[kRows][kW];
};

// JM's sub-pel refinement (SubPelBlockMotionSearch) around integer candidate ic, whose full-pel cost res holds:
// the half-pel positions around it, then the quarter-pel positions around the best of those, in JM's spiral order;
// the first strictly smaller cost wins. distortion(metric, ox, oy): the partition's distortion << kLambdaBits at
// quarter-pel offset (ox, oy), never negative.
//
// A position whose mv bits alone reach the best cost is not measured, as JM does (refine_table, for distortions
// that are table reads, measures all: the same position wins, since a skipped position's cost is at least the best
// one's). The 9 candidates of a stage differ by one of 3 offsets per component, so 3 + 3 se_bits give all their bits.
template <typename Distortion>
void refine(const Candidate& ic, MV pred, const MotionSearchParams& p, MotionResult& res, Distortion&& distortion) {
  // The integer search metric is SAD (MEDistortionFPel 0).
  const bool start_hp = p.hpel_metric == 0;
  const bool start_qp = p.hpel_metric == p.qpel_metric;
  const bool check_position0 = p.zero_mv_bonus && ic.mv == MV(0, 0);

  // One stage: centre offset (cx, cy), step 2 (half pel) or 1 (quarter pel); returns the best spiral position.
  auto stage = [&](int cx, int cy, int step, int lambda, int metric, bool skip_centre, int64_t& min_cost) {
    int64_t bits_x[3], bits_y[3];
    for (int i = 0; i < 3; ++i) {
      bits_x[i] = se_bits(ic.mv.x + cx + step * (i - 1) - pred.x);
      bits_y[i] = se_bits(ic.mv.y + cy + step * (i - 1) - pred.y);
    }
    const int first = skip_centre ? 1 : 0;
    int best = 0;
    for (int pos = first; pos < 9; ++pos) {
      int64_t cost = lambda * (bits_x[kSpiral[pos][0] + 1] + bits_y[kSpiral[pos][1] + 1]);
      if (cost >= min_cost) continue;
      cost += distortion(metric, cx + step * kSpiral[pos][0], cy + step * kSpiral[pos][1]);
      if (pos == 0 && step == 2 && check_position0) cost -= static_cast<int64_t>(lambda) * 16;
      if (cost < min_cost) {
        min_cost = cost;
        best = pos;
      }
    }
    return best;
  };

  int64_t min_cost = start_hp ? res.cost : INT64_MAX;
  const int hbest = stage(0, 0, 2, p.lambda_factor_hpel, p.hpel_metric, start_hp, min_cost);
  const int hx = 2 * kSpiral[hbest][0], hy = 2 * kSpiral[hbest][1];
  if (!start_qp) min_cost = INT64_MAX;
  const int qbest = stage(hx, hy, 1, p.lambda_factor_qpel, p.qpel_metric, start_qp, min_cost);
  res.mv = MV(ic.mv.x + hx + kSpiral[qbest][0], ic.mv.y + hy + kSpiral[qbest][1]);
  res.cost = min_cost;
}

// The table slots (me_interface.h, kSubpelSlots) of the quarter-pel stage's 9 positions, in kSpiral order, for
// each half-pel winner h (kSpiral index): offsets (2 kSpiral[h] + kSpiral[pos]).
struct QuarterSlots {
  int8_t slot[9][9];
  constexpr QuarterSlots() : slot() {
    for (int h = 0; h < 9; ++h)
      for (int pos = 0; pos < 9; ++pos)
        slot[h][pos] = static_cast<int8_t>(
            subpel_slot(2 * kSpiral[h][0] + kSpiral[pos][0], 2 * kSpiral[h][1] + kSpiral[pos][1]));
  }
};
constexpr QuarterSlots kQuarterSlots{};
// The half-pel stage's positions are the table's first 9 slots, in the same order.
static_assert(subpel_slot(0, 0) == 0 && subpel_slot(0, -2) == 1 && subpel_slot(0, 2) == 2 &&
                  subpel_slot(-2, -2) == 3 && subpel_slot(2, -2) == 4 && subpel_slot(-2, 0) == 5 &&
                  subpel_slot(2, 0) == 6 && subpel_slot(-2, 2) == 7 && subpel_slot(2, 2) == 8,
              "half-pel slots follow kSpiral");

// refine() for the usual case of the GPU run, one table serving both stages (the metrics agree), written out: every
// position's cost is formed and the minimum taken without branches on the data; the half-pel stage reads slots 0-8,
// the quarter-pel stage the 9 slots kQuarterSlots gives for the half-pel winner. Same positions, costs and order as
// refine() (tests: MeCpu.SubpelTablesGiveTheOraclesDecisions against a JM transcription, and the stream matrix).
// near, far: the partition's row of excesses over `base` (SubpelTable: slots 0-27, slots 28-48).
// An escaped entry (kSubpelEscape) enters with its lower bound base + 255. A stage whose winner costs less than
// every escaped position's bound has the winner refine() finds: the escaped positions cost at least their bounds,
// the others are exact. Otherwise (a bound at or below the winner's cost, which a tie could decide) it returns
// false without touching res, and the caller measures the escaped positions.
bool refine_table(const uint8_t* near, const uint8_t* far, uint32_t base, const Candidate& ic, MV pred,
                  const MotionSearchParams& p, MotionResult& res) {
  const bool start_hp = p.hpel_metric == 0;
  const bool start_qp = p.hpel_metric == p.qpel_metric;
  const int dx = ic.mv.x - pred.x, dy = ic.mv.y - pred.y;
  const int64_t b = static_cast<int64_t>(base) << kLambdaBits;
  auto E = [near, far](int slot) { return slot < kSubpelNearSlots ? near[slot] : far[slot - kSubpelNearSlots]; };
  int64_t min_cost = start_hp ? res.cost : INT64_MAX;
  int64_t escaped_min = INT64_MAX;  // the smallest cost an escaped position of the stage may have
  int best = 0;
  auto take = [&min_cost, &best, &escaped_min, b](int64_t bits, uint8_t e, int pos) {
    const int64_t cost = bits + b + (static_cast<int64_t>(e) << kLambdaBits);
    const bool lower = cost < min_cost;
    min_cost = lower ? cost : min_cost;
    best = lower ? pos : best;
    const int64_t bound = e == kSubpelEscape ? cost : INT64_MAX;
    escaped_min = bound < escaped_min ? bound : escaped_min;
  };
  // Half pel: offsets (2i, 2j) in kSpiral order = slots 0..8.
  const int64_t lh = p.lambda_factor_hpel;
  const int64_t hx0 = lh * se_bits(dx - 2), hx1 = lh * se_bits(dx), hx2 = lh * se_bits(dx + 2);
  const int64_t hy0 = lh * se_bits(dy - 2), hy1 = lh * se_bits(dy), hy2 = lh * se_bits(dy + 2);
  if (!start_hp) {
    int64_t c = hx1 + hy1;
    if (p.zero_mv_bonus && ic.mv == MV(0, 0)) c -= lh * 16;
    take(c, E(0), 0);
  }
  take(hx1 + hy0, E(1), 1);
  take(hx1 + hy2, E(2), 2);
  take(hx0 + hy0, E(3), 3);
  take(hx2 + hy0, E(4), 4);
  take(hx0 + hy1, E(5), 5);
  take(hx2 + hy1, E(6), 6);
  take(hx0 + hy2, E(7), 7);
  take(hx2 + hy2, E(8), 8);
  if (escaped_min <= min_cost) return false;
  const int hx = 2 * kSpiral[best][0], hy = 2 * kSpiral[best][1];
  // Quarter pel around (hx, hy), positions in kSpiral order.
  const int8_t* q = kQuarterSlots.slot[best];
  const int64_t lq = p.lambda_factor_qpel;
  const int qdx = dx + hx, qdy = dy + hy;
  const int64_t qx0 = lq * se_bits(qdx - 1), qx1 = lq * se_bits(qdx), qx2 = lq * se_bits(qdx + 1);
  const int64_t qy0 = lq * se_bits(qdy - 1), qy1 = lq * se_bits(qdy), qy2 = lq * se_bits(qdy + 1);
  best = 0;
  escaped_min = INT64_MAX;
  if (!start_qp) {
    min_cost = INT64_MAX;
    take(qx1 + qy1, E(q[0]), 0);
  }
  take(qx1 + qy0, E(q[1]), 1);
  take(qx1 + qy2, E(q[2]), 2);
  take(qx0 + qy0, E(q[3]), 3);
  take(qx2 + qy0, E(q[4]), 4);
  take(qx0 + qy1, E(q[5]), 5);
  take(qx2 + qy1, E(q[6]), 6);
  take(qx0 + qy2, E(q[7]), 7);
  take(qx2 + qy2, E(q[8]), 8);
  if (escaped_min <= min_cost) return false;
  res.mv = MV(ic.mv.x + hx + kSpiral[best][0], ic.mv.y + hy + kSpiral[best][1]);
  res.cost = min_cost;
  return true;
}

}  // namespace

MotionResult motion_search_partition(IntegerCandidateSource& src, int part, MV pred, const uint8_t* cur_mb,
                                     int cur_stride, const Plane& ref, int mb_px, int mb_py,
                                     const MotionSearchParams& p, const DspFuncs& dsp) {
  return refine_partition(src, part, src.best(part, pred), pred, cur_mb, cur_stride, ref, mb_px, mb_py, p, dsp);
}

MotionResult refine_partition(IntegerCandidateSource& src, int part, const Candidate& ic, MV pred,
                              const uint8_t* cur_mb, int cur_stride, const Plane& ref, int mb_px, int mb_py,
                              const MotionSearchParams& p, const DspFuncs& dsp) {
  MotionResult res;
  res.pred = pred;
  res.mv = ic.mv;
  res.cost = static_cast<int64_t>(motion_cost(ic.sad, p.lambda_factor_fpel, ic.mv, pred));
  if (p.disable_subpel) return res;

  // Distortions the picture-level search computed ahead (me_interface.h, SubpelTable). When both stages have them
  // (one table: the metrics agree), no pixel is touched: the GPU run's usual case.
  const SubpelTable* table_h = src.subpel(part, ic.mv, p.hpel_metric);
  const SubpelTable* table_q = p.qpel_metric == p.hpel_metric ? table_h : src.subpel(part, ic.mv, p.qpel_metric);
  if (table_h && table_q) {
    // A source holds tables of one metric (PictureCandidates::subpel_metric), so both are that one table.
    res.from_table = true;
    const SubpelRow& row = table_h->row[part];
    if (refine_table(row.near, table_h->far[part], row.base, ic, pred, p, res)) return res;
    // An escaped entry could win: below, refine() measures the escaped positions it reaches and reads the others.
  }

  const PartitionGeometry g = partition_geometry(part);
  const int w = 4 * g.w, h = 4 * g.h;
  const BlockSize bs = block_size_of(w, h);
  const uint8_t* cur = cur_mb + 4 * g.y * cur_stride + 4 * g.x;
  const int X = mb_px + 4 * g.x + ic.mv.x / 4, Y = mb_py + 4 * g.y + ic.mv.y / 4;
  const bool planes = p.planes && p.planes->covers(X, Y, w, h);
  const SubpelRegion region =
      planes ? SubpelRegion(*p.planes, X, Y, w, h) : SubpelRegion(dsp.halfpel, ref, X, Y, w, h);
  alignas(16) uint8_t pbuf[16 * 16];
  // With the planes and a memo, distortions go through the macroblock's memo; the rare blocks beyond the planes
  // (and calls without planes or memo) compute the partition's distortion directly. Same values either way.
  DistortionMemo::Slot *slot_h = nullptr, *slot_q = nullptr;
  const bool memo = planes && p.memo;
  if (memo) {
    p.memo->enter(mb_px, mb_py, cur_mb, cur_stride, dsp.pixel.sad[kB16x16]);
    slot_h = p.memo->slot(p.planes->serial, ic.mv, p.hpel_metric);
    slot_q = p.qpel_metric == p.hpel_metric ? slot_h : p.memo->slot(p.planes->serial, ic.mv, p.qpel_metric);
  }
  const uint16_t part_mask = static_cast<uint16_t>(((1u << g.w) - 1) * (0x1111u & ((1u << (4 * g.h)) - 1)) << (4 * g.y + g.x));
  const PixelFuncs& px = dsp.pixel;
  const Block4x4Funcs& b4 = dsp.block4x4;
  const AvgRowsFn avg = dsp.mc.avg;
  auto distortion = [&](int metric, int ox, int oy) -> int64_t {
    const SubpelTable* t = metric == p.hpel_metric ? table_h : table_q;
    if (t && t->exact_at(part, subpel_offset_index(ox, oy))) {
      return static_cast<int64_t>(t->at(part, subpel_offset_index(ox, oy))) << kLambdaBits;
    }
    res.table_escape |= t != nullptr;
    int ps;
    if (!memo) {
      const uint8_t* pred_px = region.predict(avg, ox, oy, pbuf, &ps);
      const uint32_t d =
          metric == 2 ? px.satd[bs](cur, cur_stride, pred_px, ps) : px.sad[bs](cur, cur_stride, pred_px, ps);
      return static_cast<int64_t>(d) << kLambdaBits;
    }
    DistortionMemo::Slot& s = metric == p.hpel_metric ? *slot_h : *slot_q;
    const int oi = (oy + 3) * 7 + (ox + 3);
    uint16_t* d = s.d[oi];
    const uint16_t missing = part_mask & ~s.known[oi];
    if (missing) {
      const uint8_t* pred_px = region.predict(avg, ox, oy, pbuf, &ps);
      const Strip4x4Fn fn = metric == 2 ? b4.satd : b4.sad;
      for (int r = 0; r < g.h; ++r)
        if ((missing >> (4 * (g.y + r))) & 0xF)
          fn(cur + 4 * r * cur_stride, cur_stride, pred_px + 4 * r * ps, ps, g.w, d + 4 * (g.y + r) + g.x);
      s.known[oi] |= part_mask;
    }
    return static_cast<int64_t>(b4.masked_sum(d, part_mask)) << kLambdaBits;
  };
  refine(ic, pred, p, res, distortion);
  res.from_table = table_h || table_q;  // one stage's metric had a table
  return res;
}

}  // namespace gme

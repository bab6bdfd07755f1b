#include "encoder/analyse_inter.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "common/bitstream.h"
#include "common/mc.h"
#include "common/mc_planes.h"
#include "common/stage_clock.h"
#include "encoder/analyse_intra.h"
#include "encoder/mvpred.h"

namespace gme {
namespace {

// Costs are signed here: JM's distblk is signed and the RDOptimization 0 skip cost can be negative.
constexpr int64_t kMaxCost = std::numeric_limits<int64_t>::max();

// JM refbits: ue(v) length of ref_idx, charged only when the list has more than one picture.
inline int64_t ref_cost(const MbContext& c, int lambda, int ref) {
  return c.num_ref_idx_active > 1 ? static_cast<int64_t>(lambda) * ue_bits(static_cast<uint32_t>(ref)) : 0;
}

// MDDistortion of the 16 luma 4x4 blocks of pred against the source (JM distortion4x4 summed). The 16x16
// primitives are exactly that sum (SATD rounds per 4x4 block, see common/pixel.h), in one call.
uint64_t md_distortion_16x16(const MbContext& c, const uint8_t pred[256]) {
  const uint8_t* src = src_luma(c);
  const int ss = c.src->plane[0].stride;
  switch (c.p->md_distortion) {
    case 0: return c.dsp->pixel.sad[kB16x16](src, ss, pred, 16);
    case 1: return c.dsp->pixel.ssd[kB16x16](src, ss, pred, 16);
    default: return c.dsp->pixel.satd[kB16x16](src, ss, pred, 16);
  }
}

struct Searcher {
  const MbContext& c;
  InterContext& ic;
  MV skip_mv;
  int64_t skip_cost = 0;  // JM GetSkipCostMB (RDOptimization 0 only)
  MV pred16[16];  // 16x16 predictor per reference (window centre of the fast full search)
  MbInfo cur;     // the macroblock's partially decided inter state (MV prediction reads it)
  MvPredCache mvp;  // predictors of every partition query: the neighbouring macroblocks read once
  int begun_ref = -1;  // the reference the source's begin_mb was last called with for this macroblock
  // Stage time of this macroblock's partition searches (common/stage_clock.h). A GPU run's partition search takes
  // ~100-200 ns and a TSC read ~10-20 ns (reading it around every search and its refinement would cost a sizeable
  // share of the motion search itself), so the clock is read at the start and end of the macroblock's motion search
  // (and around the mode decision work inside it, RDOptimization 1's 8x8 costs: pause/resume), which gives the
  // searches' total time exactly, and around the refinement of a random 1 in kSampleEvery searches only; the picture
  // splits the total with the sample's mean refinement time (StageTimes::split_partition_searches). Over a 640x480
  // picture's ~49k searches the sample holds ~6k. The bookkeeping between consecutive searches (predictors, state)
  // counts as integer ME, as it does in JM's ME time.
  static constexpr uint32_t kSampleEvery = 8;
  uint64_t search_ticks = 0, sampled_ticks = 0, mark = 0;
  int64_t searches = 0, sampled = 0;
  void start_timing() { mark = stage_ticks(); }
  void pause() { search_ticks += stage_ticks() - mark; }
  void resume() { mark = stage_ticks(); }
  bool sample_this_search() {  // xorshift32: independent of the partition order, so every partition is sampled alike
    uint32_t& x = ic.timing_sample_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x % kSampleEvery == 0;
  }

  Searcher(const MbContext& ctx, InterContext& ictx) : c(ctx), ic(ictx), mvp(mvctx()) {
    cur.type = MbType::P8x8;
    cur.slice_id = c.slice_id;
    for (int r = 0; r < c.num_ref_idx_active; ++r) pred16[r] = mvp.predict(0, 0, 4, 4, r);
    skip_mv = predict_skip_mv(mvctx());
    if (c.p->rd_optimization == 0) {
      uint8_t pred[256];
      predict_luma(c.dsp->mc, pred, 16, *c.refs[0], 16 * c.mb_x, 16 * c.mb_y, skip_mv, 16, 16);
      skip_cost = static_cast<int64_t>(md_distortion_16x16(c, pred) << kLambdaBits) -
                  static_cast<int64_t>(c.lam.mf[2]) * 8;
    }
  }
  MvPredContext mvctx() const { return MvPredContext{c.mbs, c.mb_w, c.mb_h, c.mb_x, c.mb_y, c.slice_id, &cur}; }

  // The source's begin_mb for this macroblock and `ref` (this Searcher is the source's only caller: once per
  // (macroblock, reference) suffices).
  void begin(int ref) {
    if (ref == begun_ref) return;
    ic.source->begin_mb(c.mb_x, c.mb_y, ref, pred16[ref]);
    begun_ref = ref;
  }

  // BlockMotionSearch of partition `part` with reference `ref` against the current state's predictor. With
  // RDOptimization 0 the 16x16 search of every reference ends with JM's skip check: if GetSkipCostMB (prediction
  // of ref 0 at the P_Skip vector, MDDistortion - 8 * lambda_mf[Q_PEL]) is lower, the vector becomes the skip
  // vector and the cost the skip cost (it can be negative).
  int64_t search(int part, int ref, MV* mv_out) {
    const PartitionGeometry g = partition_geometry(part);
    const MV pred = mvp.predict(g.x, g.y, g.w, g.h, ref);
    IntegerCandidateSource& src = *ic.source;
    begin(ref);
    const Candidate best = src.best(part, pred);
    const bool timed = sample_this_search();
    const uint64_t t1 = timed ? stage_ticks() : 0;
    MotionSearchParams msp = ic.msp;
    msp.zero_mv_bonus = c.p->rd_optimization == 0 && ref == 0 && part == 0;
    msp.planes = c.refs[ref]->halfpel.get();
    MotionResult r = refine_partition(src, part, best, pred, src_luma(c), c.src->plane[0].stride,
                                      c.refs[ref]->plane[0], 16 * c.mb_x, 16 * c.mb_y, msp, *c.dsp);
    if (timed) {
      sampled_ticks += stage_ticks() - t1;
      ++sampled;
    }
    ++searches;
    ic.times->subpel_searches += !msp.disable_subpel;
    ic.times->subpel_from_tables += r.from_table;
    ic.times->subpel_table_escapes += r.table_escape;
    int64_t cost = r.cost;  // signed: JM's check_position0 bonus can make it negative
    *mv_out = r.mv;
    if (c.p->rd_optimization == 0 && part == kPart16x16 && skip_cost < cost) {
      cost = skip_cost;
      *mv_out = skip_mv;
    }
    return cost;
  }

  void set_state(int part, int ref, MV mv) {
    const PartitionGeometry g = partition_geometry(part);
    for (int y = g.y; y < g.y + g.h; ++y)
      for (int x = g.x; x < g.x + g.w; ++x) {
        cur.ref_idx[(x >> 1) + 2 * (y >> 1)] = static_cast<int8_t>(ref);
        cur.mv[x + 4 * y] = mv;
      }
  }

  // Best reference for one partition (JM list_prediction_cost / update_mcost).
  int64_t partition(int part, int ref_lambda, int* best_ref, MV* best_mv) {
    int64_t best = kMaxCost;
    for (int r = 0; r < c.num_ref_idx_active; ++r) {
      MV mv;
      const int64_t m = search(part, r, &mv);
      if (m < best) {
        const int64_t cost = m + ref_cost(c, ref_lambda, r);
        if (cost < best) { best = cost; *best_ref = r; *best_mv = mv; }
      }
    }
    set_state(part, *best_ref, *best_mv);
    return best;
  }
};

// What the motion search decides for an inter candidate: the MbCoding fields it sets, with MbCoding's defaults.
// Five candidates (four partitionings and P_Skip) are built per macroblock but only one is coded, so they stay
// this small (~90 bytes) instead of a whole zeroed MbCoding (~2 KB of levels) each.
struct InterMotion {
  MbType type = MbType::I16x16;
  int8_t ref_idx[4] = {0, 0, 0, 0};
  MV mv[16];
  SubMbType sub_type[4] = {};

  // The candidate as MbCoding before coding (levels, cbp and intra fields zero).
  void to_coding(MbCoding& mb) const {
    reset_coding(mb);
    mb.type = type;
    std::memcpy(mb.ref_idx, ref_idx, sizeof(ref_idx));
    std::memcpy(mb.mv, mv, sizeof(mv));
    std::memcpy(mb.sub_type, sub_type, sizeof(sub_type));
  }
};

struct InterCandidate {
  InterMotion mb;
  int64_t cost = kMaxCost;
};

// Sub-partitions (first partition index, count) of a sub_mb_type for 8x8 block b8.
void sub_parts(SubMbType t, int b8, int* first, int* n) {
  switch (t) {
    case SubMbType::S8x8: *first = kPart8x8 + b8; *n = 1; break;
    case SubMbType::S8x4: *first = kPart8x4 + 2 * b8; *n = 2; break;
    case SubMbType::S4x8: *first = kPart4x8 + 2 * b8; *n = 2; break;
    default: *first = kPart4x4 + 4 * b8; *n = 4; break;
  }
}

// JM rdcost_for_8x8blocks (RDOptimization 1, 4:2:0): SSD of the 8x8 luma after coding it (with the 8x8 threshold)
// + lambda_md * (ue(sub_mb_type) + ref_idx te(v) + mvd bits + CAVLC bits of its four 4x4 blocks when any level
// survives); a distortion already >= the best cost is returned alone. nz holds JM's nz_coeff of this macroblock as
// the decision sees it: zero at the start, then whatever the last trial of each 8x8 wrote (not the best's).
int64_t rdcost_8x8(const MbContext& c, Searcher& s, int b8, SubMbType st, int ref, const MV mvs[4], MbInfo& nz,
                   int64_t min_rdcost) {
  int first, n;
  sub_parts(st, b8, &first, &n);
  MbCoding mb;
  mb.type = MbType::P8x8;
  for (int i = 0; i < 4; ++i) mb.sub_type[i] = st;
  mb.ref_idx[b8] = static_cast<int8_t>(ref);
  uint8_t pred[256];
  const Frame& rf = *c.refs[ref];
  for (int i = 0; i < n; ++i) {
    const PartitionGeometry g = partition_geometry(first + i);
    predict_luma(c.dsp->mc, pred + 4 * g.x + 64 * g.y, 16, rf, 16 * c.mb_x + 4 * g.x, 16 * c.mb_y + 4 * g.y, mvs[i],
                 4 * g.w, 4 * g.h);
  }
  const int cnt_nonz = code_inter_luma8x8(c, b8, pred, mb);
  const int px = 16 * c.mb_x + 8 * (b8 & 1), py = 16 * c.mb_y + 8 * (b8 >> 1);
  const int64_t d = static_cast<int64_t>(c.dsp->pixel.ssd[kB8x8](c.src->plane[0].at(px, py), c.src->plane[0].stride,
                                                                  c.rec->plane[0].at(px, py), c.rec->plane[0].stride))
                    << kLambdaBits;
  if (d >= min_rdcost) return d;
  int rate = ue_bits(static_cast<uint32_t>(st));
  if (c.num_ref_idx_active > 1)
    rate += c.num_ref_idx_active == 2 ? 1 : ue_bits(static_cast<uint32_t>(ref));
  for (int i = 0; i < n; ++i) {  // mvds against the predictors of the state built so far
    const PartitionGeometry g = partition_geometry(first + i);
    const MV pred_mv = s.mvp.predict(g.x, g.y, g.w, g.h, ref);
    rate += se_bits(mvs[i].x - pred_mv.x) + se_bits(mvs[i].y - pred_mv.y);
    s.set_state(first + i, ref, mvs[i]);
  }
  if (cnt_nonz) {
    for (int i = 0; i < 4; ++i) {
      const int blk = 2 * (b8 & 1) + 8 * (b8 >> 1) + (i & 1) + 4 * (i >> 1);
      rate += luma4x4_coeff_bits(c, nz, blk, mb.luma[blk]);
      int tc = 0;
      for (int k = 0; k < 16; ++k) tc += mb.luma[blk][k] != 0;
      nz.total_coeff[blk] = static_cast<uint8_t>(tc);
    }
  }
  return d + static_cast<int64_t>(c.lam.md_factor) * rate;
}

// Lower bounds of the inter candidates' costs, from the sub-pel tables' floors (me_interface.h, SubpelFloors), for
// RDOptimization 0, which codes the cheapest candidate (the first of equals), and per 8x8 block the cheapest sub
// type (likewise): a candidate, sub type or reference of a sub type's trial whose bound - the cost of its partitions
// searched so far plus the bounds of the rest - is no lower than the best cost found before it cannot be chosen,
// and its remaining searches are left out: the same decisions, streams and reconstructions, without the work. A
// partition's cost is a distortion its floor bounds (every stage of the refinement reads the tables, whichever
// candidate the predictor picks) plus lambda times at least 2 mv bits (one per component), plus its reference's
// cost. What a search left out would have written into the macroblock's motion state (Searcher::set_state) is read
// by no later search: each reads only partitions decoded before it in its own candidate (or, in P8x8, the 8x8
// blocks already decided).
class CostBounds {
 public:
  static constexpr int kMaxBoundRefs = 32;  // the most references a P slice's list 0 can hold
  CostBounds(const MbContext& c, const InterContext& ic, int ref_lambda) {
    const MotionSearchParams& m = ic.msp;
    // The half-pel stage starts from the integer cost only with a SAD metric there; with SATD every candidate
    // cost is a table value. Both stages must read the same tables.
    if (c.p->rd_optimization != 0 || m.disable_subpel || m.hpel_metric == 0 || m.hpel_metric != m.qpel_metric ||
        c.num_ref_idx_active > kMaxBoundRefs)
      return;
    const SubpelFloors* f[kMaxBoundRefs];
    for (int r = 0; r < c.num_ref_idx_active; ++r)
      if (!(f[r] = ic.source->subpel_floors(r, m.hpel_metric))) return;
    const int64_t bits = 2 * static_cast<int64_t>(std::min(m.lambda_factor_hpel, m.lambda_factor_qpel));
    const int64_t ref = ref_cost(c, ref_lambda, 0);  // the cheapest reference's cost (index 0: the shortest code)
    for (int part = 0; part < kNumPartitions; ++part) {
      uint32_t floor = f[0]->d[part];
      for (int r = 1; r < c.num_ref_idx_active; ++r) floor = std::min(floor, f[r]->d[part]);
      part_[part] = (static_cast<int64_t>(floor) << kLambdaBits) + bits;
    }
    // 16x16, 16x8, 8x16: each partition with its own best reference.
    for (int part = 0; part < kPart8x8; ++part) part_[part] += ref;
    // P8x8 sub types: the sub-partitions share one reference; JM adds the sub type's reference bits and takes 1.
    for (int b8 = 0; b8 < 4; ++b8)
      for (int st = 0; st < 4; ++st) {
        int first, n;
        sub_parts(static_cast<SubMbType>(st), b8, &first, &n);
        int64_t b = ref + ref_cost(c, c.lam.mf[2], st) - 1;
        for (int i = 0; i < n; ++i) b += part_[first + i];
        sub_[b8][st] = b;
      }
    valid_ = true;
  }
  CostBounds() = default;  // no bounds
  bool valid() const { return valid_; }
  // Partitions first .. first + n - 1: of 16x16, 16x8 or 8x16 with their reference's cost; of an 8x8 block's sub
  // type without (the sub-partitions share one reference, whose cost the caller adds once).
  int64_t parts(int first, int n) const {
    int64_t b = 0;
    for (int i = 0; i < n; ++i) b += part_[first + i];
    return b;
  }
  int64_t sub_type(int b8, int st) const { return sub_[b8][st]; }
  // 8x8 blocks from..3 of P8x8, each at its cheapest enabled sub type.
  int64_t blocks8(int from, const bool enabled[4]) const {
    int64_t total = 0;
    for (int b8 = from; b8 < 4; ++b8) {
      int64_t best = std::numeric_limits<int64_t>::max();
      for (int st = 0; st < 4; ++st)
        if (enabled[st]) best = std::min(best, sub_[b8][st]);
      total += best;
    }
    return total;
  }

 private:
  bool valid_ = false;
  int64_t part_[kNumPartitions] = {};
  int64_t sub_[4][4] = {};
};

// Motion search of the 16x16 / 16x8 / 8x16 / P8x8 candidates; fills their MbCoding (type, refs, mvs). Candidates
// that cannot be chosen (CostBounds) keep cost kMaxCost.
void search_modes(const MbContext& c, Searcher& s, InterCandidate cand[4]) {
  const EncoderParams& p = *c.p;
  const int ref_lambda = p.rd_optimization ? c.lam.mf[2] : c.lam.mf[2] >> 2;
  s.begin(0);  // the floors are the macroblock's: begun before the bounds read them
  const CostBounds found(c, s.ic, ref_lambda);
  // Tests (EncoderState::check_cost_bounds): nothing is left out; each bound is checked against the cost found.
  const bool checking = c.check_cost_bounds && found.valid();
  const CostBounds none;
  const CostBounds& bounds = checking ? none : found;
  const auto check = [&](int64_t bound, int64_t cost) {
    if (!checking) return;
    ++s.ic.times->bound_checks;
    s.ic.times->bound_violations += bound > cost;
  };
  int64_t& left_out = s.ic.times->searches_bounded;
  int64_t best_so_far = kMaxCost;
  const MbType types[3] = {MbType::P16x16, MbType::P16x8, MbType::P8x16};
  for (int m = 0; m < 3; ++m) {
    if (!p.p_search[m + 1]) continue;
    const int nparts = m == 0 ? 1 : 2;
    const int first = m == 0 ? kPart16x16 : m == 1 ? kPart16x8 : kPart8x16;
    InterMotion& mb = cand[m].mb;
    mb.type = types[m];
    int64_t cost = 0;
    bool complete = true;
    for (int i = 0; i < nparts; ++i) {
      if (bounds.valid() && cost + bounds.parts(first + i, nparts - i) >= best_so_far) {
        left_out += static_cast<int64_t>(nparts - i) * c.num_ref_idx_active;
        complete = false;
        break;
      }
      int ref = 0;
      MV mv;
      const int64_t part_cost = s.partition(first + i, ref_lambda, &ref, &mv);
      // 16x16's cost may be JM's skip cost instead (Searcher::search), which no bound covers: 16x16 is never left out.
      if (m > 0) check(found.parts(first + i, 1), part_cost);
      cost += part_cost;
      const PartitionGeometry g = partition_geometry(first + i);
      for (int y = g.y; y < g.y + g.h; ++y)
        for (int x = g.x; x < g.x + g.w; ++x) {
          mb.ref_idx[(x >> 1) + 2 * (y >> 1)] = static_cast<int8_t>(ref);
          mb.mv[x + 4 * y] = mv;
        }
    }
    if (!complete) continue;
    cand[m].cost = cost;
    best_so_far = std::min(best_so_far, cost);
  }
  // P8x8: per 8x8, each enabled sub type, each reference (sub-partitions share the 8x8's reference).
  if (!(p.p_search[4] || p.p_search[5] || p.p_search[6] || p.p_search[7])) return;
  const bool* sub_enabled = &p.p_search[4];
  // The searches P8x8 leaves out from 8x8 block b8 on, when it is given up there.
  const auto give_up = [&](int b8) {
    for (int b = b8; b < 4; ++b)
      for (int st = 0; st < 4; ++st) {
        int first, n;
        sub_parts(static_cast<SubMbType>(st), b, &first, &n);
        if (sub_enabled[st]) left_out += static_cast<int64_t>(n) * c.num_ref_idx_active;
      }
  };
  InterMotion& mb = cand[3].mb;
  mb.type = MbType::P8x8;
  const bool rd = p.rd_optimization != 0;
  MbInfo nz;  // JM's nz_coeff of this macroblock during the P8x8 decision (RDOptimization 1): zero at the start
  nz.slice_id = c.slice_id;
  int64_t total = 0;
  for (int b8 = 0; b8 < 4; ++b8) {
    if (bounds.valid() && total + bounds.blocks8(b8, sub_enabled) >= best_so_far) {
      give_up(b8);
      return;  // cand[3] keeps cost kMaxCost
    }
    int64_t best8 = kMaxCost, best_rd = kMaxCost;
    for (int st = 0; st < 4; ++st) {
      if (!p.p_search[4 + st]) continue;
      int first, n;
      sub_parts(static_cast<SubMbType>(st), b8, &first, &n);
      if (bounds.valid() && bounds.sub_type(b8, st) >= best8) {  // cannot be cheaper than this block's best so far
        left_out += static_cast<int64_t>(n) * c.num_ref_idx_active;
        continue;
      }
      int64_t best_ref_cost = kMaxCost;
      int best_ref = 0;
      MV best_mv[4];
      const int64_t sub_bits = ref_cost(c, c.lam.mf[2], st) - 1;
      for (int r = 0; r < c.num_ref_idx_active; ++r) {
        int64_t cost = 0;
        MV mvs[4];
        bool dropped = false;
        for (int i = 0; i < n; ++i) {
          // This reference cannot make the sub type the block's cheapest: its other partitions are left out (the
          // sub type then wins, if at all, with a cheaper reference, as it would have).
          if (bounds.valid() && best8 != kMaxCost &&
              cost + bounds.parts(first + i, n - i) + ref_cost(c, ref_lambda, r) + sub_bits >= best8) {
            left_out += n - i;
            dropped = true;
            break;
          }
          const int64_t part_cost = s.search(first + i, r, &mvs[i]);
          if (!rd) check(found.parts(first + i, 1), part_cost);
          cost += part_cost;
          s.set_state(first + i, r, mvs[i]);
        }
        if (dropped) continue;
        if (cost < best_ref_cost) {
          cost += ref_cost(c, ref_lambda, r);
          if (cost < best_ref_cost) {
            best_ref_cost = cost;
            best_ref = r;
            std::memcpy(best_mv, mvs, sizeof(best_mv));
          }
        }
      }
      if (best_ref_cost == kMaxCost) continue;  // every reference was dropped: the sub type cannot win
      if (!rd) check(found.sub_type(b8, st), best_ref_cost + sub_bits);
      bool better;
      int64_t cost;
      if (rd) {
        // md_high.c: submacroblock_mode_decision_p_slice, rdcost_for_8x8blocks.
        cost = best_ref_cost;
        s.pause();
        const int64_t rdc = rdcost_8x8(c, s, b8, static_cast<SubMbType>(st), best_ref, best_mv, nz, best_rd);
        s.resume();
        better = rdc < best_rd;
        if (better) best_rd = rdc;
      } else {
        // JM low complexity: + lambda_mf[Q_PEL] * refbits[sub_mb_type] (only with several references), - 1.
        cost = best_ref_cost + sub_bits;
        better = cost < best8;
      }
      if (better) {
        best8 = cost;
        mb.sub_type[b8] = static_cast<SubMbType>(st);
        mb.ref_idx[b8] = static_cast<int8_t>(best_ref);
        for (int i = 0; i < n; ++i) {
          const PartitionGeometry g = partition_geometry(first + i);
          for (int y = g.y; y < g.y + g.h; ++y)
            for (int x = g.x; x < g.x + g.w; ++x) mb.mv[x + 4 * y] = best_mv[i];
        }
      }
    }
    // The next 8x8 blocks predict from this one's decision.
    int first, n;
    sub_parts(mb.sub_type[b8], b8, &first, &n);
    for (int i = 0; i < n; ++i) {
      const PartitionGeometry g = partition_geometry(first + i);
      s.set_state(first + i, mb.ref_idx[b8], mb.mv[g.x + 4 * g.y]);
    }
    total += best8;
  }
  cand[3].cost = total;
}

// P_Skip at the vector the Searcher already predicted (it reads only neighbouring macroblocks).
void make_skip(MV skip_mv, InterMotion& mb) {
  mb.type = MbType::PSkip;
  for (int i = 0; i < 4; ++i) mb.ref_idx[i] = 0;
  for (int i = 0; i < 16; ++i) mb.mv[i] = skip_mv;
}

// Codes an inter candidate (prediction, residual, reconstruction in the picture).
void code_inter_candidate(const MbContext& c, MbCoding& mb) {
  uint8_t luma[256], chroma[2][64];
  predict_inter(c, mb, luma, chroma);
  code_inter(c, luma, chroma, mb);
  if (mb.type != MbType::PSkip) compute_mvd(c, mb);
}

bool is_skip_equivalent(const MbCoding& mb, const InterMotion& skip) {
  return mb.type == MbType::P16x16 && mb.cbp == 0 && mb.ref_idx[0] == 0 && mb.mv[0] == skip.mv[0];
}

struct RecSave { uint8_t y[256], u[64], v[64]; };
void save_rec(const MbContext& c, RecSave& s) {
  for (int y = 0; y < 16; ++y) std::memcpy(s.y + 16 * y, c.rec->plane[0].at(16 * c.mb_x, 16 * c.mb_y + y), 16);
  for (int y = 0; y < 8; ++y) {
    std::memcpy(s.u + 8 * y, c.rec->plane[1].at(8 * c.mb_x, 8 * c.mb_y + y), 8);
    std::memcpy(s.v + 8 * y, c.rec->plane[2].at(8 * c.mb_x, 8 * c.mb_y + y), 8);
  }
}
void load_rec(const MbContext& c, const RecSave& s) {
  for (int y = 0; y < 16; ++y) std::memcpy(c.rec->plane[0].at(16 * c.mb_x, 16 * c.mb_y + y), s.y + 16 * y, 16);
  for (int y = 0; y < 8; ++y) {
    std::memcpy(c.rec->plane[1].at(8 * c.mb_x, 8 * c.mb_y + y), s.u + 8 * y, 8);
    std::memcpy(c.rec->plane[2].at(8 * c.mb_x, 8 * c.mb_y + y), s.v + 8 * y, 8);
  }
}

// SSD of the macroblock's reconstruction (luma and chroma) in JM's fixed point, as RDOptimization 1 charges P_Skip.
int64_t rd_skip_distortion(const MbContext& c) {
  uint64_t d = c.dsp->pixel.ssd[kB16x16](src_luma(c), c.src->plane[0].stride, rec_luma(c), c.rec->plane[0].stride);
  for (int k = 0; k < 2; ++k)
    d += c.dsp->pixel.ssd[kB8x8](src_chroma(c, k), c.src->plane[1 + k].stride, rec_chroma(c, k),
                                 c.rec->plane[1 + k].stride);
  return static_cast<int64_t>(d << kLambdaBits);
}

// JM (use_of_cc): the skip costs the growth of the pending mb_skip_run code, ue(run + 1) - ue(run) bits: 0 or 2.
// RDCost_for_macroblocks charges lambda / 2 when the rate is 0 (ForceTrueRateRDO = 0).
int64_t rd_skip_rate(const MbContext& c, int bits) {
  return bits > 0 ? static_cast<int64_t>(c.lam.md_factor) * bits : static_cast<int64_t>(c.lam.md_half);
}
int skip_run_growth(int run) {
  return ue_bits(static_cast<uint32_t>(run + 1)) - ue_bits(static_cast<uint32_t>(run));
}

// Does P_Skip (distortion d) win against the best other candidate's cost? It is tried first (JM's mb_mode_table),
// so it wins ties. Where the run before the macroblock is not known yet, the answer is the same for both possible
// rates in nearly every macroblock; only where the rates decide differently does this wait for the run.
bool skip_wins(const MbContext& c, int64_t d, int64_t best_other) {
  if (!c.skip_run_wait) return d + rd_skip_rate(c, skip_run_growth(c.skip_run)) <= best_other;
  const bool cheap = d + rd_skip_rate(c, 0) <= best_other, dear = d + rd_skip_rate(c, 2) <= best_other;
  if (cheap == dear) return cheap;
  return d + rd_skip_rate(c, skip_run_growth(c.skip_run_wait->wait())) <= best_other;
}

// md_low.c's intra candidates after the inter decision: Intra4x4 if its cost is <= *min_cost (the best inter
// cost when have_inter), then Intra16x16 if strictly cheaper than whatever is best by then (or, without an inter
// candidate, if Intra4x4 did not win). On an intra win returns true with *min_cost and `intra` (chroma mode
// included) set; the Intra4x4 reconstruction is then in the picture. `intra` must come default-constructed.
//
// Same outcome, less work: Intra4x4 wins iff cost4 <= min(*min_cost, cost16), so Intra16x16 is decided first
// (its edges lie outside the macroblock) and that bound is the Intra4x4 decision's budget: most P macroblocks
// stop after a few 4x4 blocks. The chroma mode only matters to an intra winner, so it is decided last.
bool decide_intra_low(const MbContext& c, bool have_inter, int64_t* min_cost, MbCoding& intra) {
  const EncoderParams& p = *c.p;
  const bool try_i4 = !p.disable_intra4x4;
  const bool try_i16 = !p.disable_intra16x16 || p.disable_intra4x4;
  int mode16 = kI16DC;
  // Intra16x16 is only compared with the inter cost (below it? the smaller?), unless there is no inter candidate.
  const int64_t bound16 = have_inter ? *min_cost : kMaxCost;
  const int64_t cost16 = try_i16 ? static_cast<int64_t>(decide_intra16x16_mode(c, &mode16, bound16)) : kMaxCost;
  const int64_t bound4 = std::min(*min_cost, cost16);
  bool won = false;
  if (try_i4 && bound4 >= 0) {  // costs of intra modes are >= 0: a negative bound (skip cost) cannot be met
    // Straight into `intra` (fresh from the caller); a loser's partial levels are overwritten or unused.
    const int64_t cost4 = static_cast<int64_t>(code_intra4x4_blocks(c, intra, false, static_cast<uint64_t>(bound4)));
    if (cost4 <= bound4) {
      *min_cost = cost4;
      won = true;
    }
  }
  if (!won && try_i16 && (cost16 < *min_cost || !have_inter)) {
    *min_cost = cost16;
    reset_coding(intra);
    intra.type = MbType::I16x16;
    intra.i16_mode = mode16;
    won = true;
  }
  if (won) intra.chroma_mode = decide_chroma_mode(c, 0);
  return won;
}

}  // namespace

void analyse_p_macroblock(const MbContext& c, InterContext& ic, MbCoding& out) {
  const EncoderParams& p = *c.p;
  const bool intra_ok = !p.disable_intra_in_inter;
  const double t_md = stage_clock_seconds();

  Searcher s(c, ic);
  InterCandidate cand[4];
  s.start_timing();
  search_modes(c, s, cand);  // every partition search of the macroblock happens here
  s.pause();
  const double me_s = stage_ticks_to_seconds(s.search_ticks);
  ic.times->partition_search += me_s;
  ic.times->sampled_refinement += stage_ticks_to_seconds(s.sampled_ticks);
  ic.times->partition_searches += s.searches;
  ic.times->sampled_searches += s.sampled;
  InterMotion skip;
  make_skip(s.skip_mv, skip);

  double coding_s = 0;  // RDOptimization 0: the coding after the decision
  if (p.rd_optimization == 0) {
    // md_low.c: the cheapest inter mode by motion cost, then intra by its low-complexity cost.
    int64_t min_cost = kMaxCost;
    int best = -1;
    for (int m = 0; m < 4; ++m)
      if (cand[m].cost < min_cost) { min_cost = cand[m].cost; best = m; }
    // Intra is decided straight into `out` (default-constructed, as decide_intra_low needs it); an inter winner
    // then resets it.
    const bool intra_best = (intra_ok || best < 0) && decide_intra_low(c, best >= 0, &min_cost, out);
    const double t_code = stage_clock_seconds();
    if (intra_best) {
      // Intra4x4 already left its reconstruction in the picture (and nothing overwrote it since).
      if (out.type == MbType::I16x16) code_intra16x16(c, out);
      code_chroma_intra(c, out);
    } else if (best < 0) {
      skip.to_coding(out);  // no inter mode searched and no intra allowed: P_Skip is the only choice left
      code_inter_candidate(c, out);
    } else {
      cand[best].mb.to_coding(out);
      code_inter_candidate(c, out);
      // md_low.c: 16x16 without residual on the skip vector is coded as P_Skip. Its prediction (reference 0, the
      // same vector) and hence its reconstruction are the 16x16's, already in the picture: only the syntax changes.
      // JM keeps best_mode 16x16 there: the offsets are updated with the 16x16's adjustments.
      if (is_skip_equivalent(out, skip)) {
        const RoundingAdjust adjust = out.rounding_adjust;
        skip.to_coding(out);
        out.rounding_adjust = adjust;
      }
    }
    coding_s = stage_clock_seconds() - t_code;
  } else {
    // md_high.c: every candidate coded, SSD + lambda * bits, in mb_mode_table order, strictly better wins. P_Skip
    // comes first there; here it is coded first but compared last (skip_wins: its rate may depend on a run not
    // known yet), which decides the same: it wins iff its cost is <= every other candidate's, and otherwise the
    // first of the cheapest others wins either way.
    int64_t best_cost = kMaxCost;
    RecSave best_rec, skip_rec;
    int64_t skip_d = 0;
    MbCoding skip_coding;
    if (p.p_slice_skip) {
      skip.to_coding(skip_coding);
      code_inter_candidate(c, skip_coding);
      skip_d = rd_skip_distortion(c);
      save_rec(c, skip_rec);
    }
    auto consider = [&](MbCoding& mb) {
      code_inter_candidate(c, mb);
      const int64_t cost = static_cast<int64_t>(rd_cost_macroblock(c, mb));
      if (cost < best_cost) {
        best_cost = cost;
        out = mb;
        save_rec(c, best_rec);
      }
    };
    MbCoding trial;
    for (int m = 0; m < 4; ++m)
      if (cand[m].cost != kMaxCost) {
        cand[m].mb.to_coding(trial);
        consider(trial);
      }
    if (intra_ok || (best_cost == kMaxCost && !p.p_slice_skip)) {
      MbCoding intra;
      const int64_t cost = static_cast<int64_t>(analyse_intra(c, intra));
      if (cost < best_cost) {
        best_cost = cost;
        out = intra;
        save_rec(c, best_rec);
      }
    }
    if (p.p_slice_skip && skip_wins(c, skip_d, best_cost)) {
      out = skip_coding;
      best_rec = skip_rec;
    } else if (best_cost == kMaxCost) {  // nothing allowed at all: fall back to P_Skip
      skip.to_coding(out);
      code_inter_candidate(c, out);
      save_rec(c, best_rec);
    }
    load_rec(c, best_rec);
    if (p.p_slice_skip && is_skip_equivalent(out, skip)) out.type = MbType::PSkip;  // same samples, fewer bits
  }
  ic.times->mode_decision += stage_clock_seconds() - t_md - me_s - coding_s;
  ic.times->coding += coding_s;
}

}  // namespace gme

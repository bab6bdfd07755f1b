#include "encoder/analyse_intra.h"

#include <cstdlib>
#include <cstring>
#include <limits>

#include "common/stage_clock.h"
#include "common/transform.h"

namespace gme {
namespace {

constexpr uint64_t kMaxCost = std::numeric_limits<uint64_t>::max();

inline uint64_t dist_fp(uint64_t d) { return d << kLambdaBits; }
inline uint64_t rate_fp(int lambda_factor, int64_t bits) { return static_cast<uint64_t>(lambda_factor) * bits; }

// Distortion of a w x h block by the MDDistortion metric (0 SAD, 1 SSE, 2 SATD).
uint64_t md_distortion(const MbContext& c, BlockSize bs, const uint8_t* a, int as, const uint8_t* b, int bsd) {
  switch (c.p->md_distortion) {
    case 0: return c.dsp->pixel.sad[bs](a, as, b, bsd);
    case 1: return c.dsp->pixel.ssd[bs](a, as, b, bsd);
    default: return c.dsp->pixel.satd[bs](a, as, b, bsd);
  }
}

// JM hadamard4x4 (lcommon transform.c): unnormalised horizontal pass, vertical pass halved per output.
void jm_hadamard4x4(const int in[16], int out[16]) { fwd_hadamard4x4_dc(in, out); }

// JM distI16x16_satd: sum of |AC| of every 4x4 Hadamard (coefficients halved) plus |Hadamard of the halved DCs|.
// JM's Intra16x16 SATD; a result >= budget may be a partial sum (the AC alone of the first rows: see
// PixelFuncs::hadamard_ac_16x16), since the DC part only adds to it.
uint64_t i16_satd(const PixelFuncs& px, const uint8_t* src, int ss, const uint8_t* pred, uint32_t budget) {
  int dcs[16];
  uint64_t cost = px.hadamard_ac_16x16(src, ss, pred, 16, dcs, budget);
  if (cost >= budget) return cost;
  for (int& d : dcs) d >>= 1;
  int hd[16];
  jm_hadamard4x4(dcs, hd);
  for (int i = 0; i < 16; ++i) cost += static_cast<uint64_t>(std::abs(hd[i]));
  return cost;
}

// The mode's distortion, or (SATD) any value >= budget once it is known to reach it.
uint64_t i16_distortion(const MbContext& c, const uint8_t* pred, uint32_t budget) {
  const uint8_t* src = src_luma(c);
  const int ss = c.src->plane[0].stride;
  switch (c.p->md_distortion) {
    case 0: return c.dsp->pixel.sad[kB16x16](src, ss, pred, 16);
    case 1: return c.dsp->pixel.ssd[kB16x16](src, ss, pred, 16);
    default: return i16_satd(c.dsp->pixel, src, ss, pred, budget);
  }
}

struct LumaSave { uint8_t y[256]; };
struct ChromaSave { uint8_t c[2][64]; };

void save_luma(const MbContext& c, LumaSave& s) {
  const Plane& p = c.rec->plane[0];
  for (int y = 0; y < 16; ++y) std::memcpy(s.y + 16 * y, p.at(16 * c.mb_x, 16 * c.mb_y + y), 16);
}
void load_luma(const MbContext& c, const LumaSave& s) {
  Plane& p = c.rec->plane[0];
  for (int y = 0; y < 16; ++y) std::memcpy(p.at(16 * c.mb_x, 16 * c.mb_y + y), s.y + 16 * y, 16);
}
void save_chroma(const MbContext& c, ChromaSave& s) {
  for (int k = 0; k < 2; ++k)
    for (int y = 0; y < 8; ++y) std::memcpy(s.c[k] + 8 * y, c.rec->plane[1 + k].at(8 * c.mb_x, 8 * c.mb_y + y), 8);
}
void load_chroma(const MbContext& c, const ChromaSave& s) {
  for (int k = 0; k < 2; ++k)
    for (int y = 0; y < 8; ++y) std::memcpy(c.rec->plane[1 + k].at(8 * c.mb_x, 8 * c.mb_y + y), s.c[k] + 8 * y, 8);
}

void copy_chroma_levels(const MbCoding& from, MbCoding& to) {
  to.chroma_mode = from.chroma_mode;
  std::memcpy(to.chroma_dc, from.chroma_dc, sizeof(to.chroma_dc));
  std::memcpy(to.chroma_ac, from.chroma_ac, sizeof(to.chroma_ac));
  std::memcpy(to.rounding_adjust.chroma, from.rounding_adjust.chroma, sizeof(to.rounding_adjust.chroma));
  to.cbp = (to.cbp & 15) | (from.cbp & 0x30);
}

// One 4x4 block's adjustments in a macroblock's luma adjustment plane (JM store_/update_adaptive_rounding_4x4).
void get_block_adjust(const MbCoding& mb, int blk, int16_t out[16]) {
  for (int k = 0; k < 16; ++k) out[k] = mb.rounding_adjust.luma[4 * (blk >> 2) + (k >> 2)][4 * (blk & 3) + (k & 3)];
}
void set_block_adjust(MbCoding& mb, int blk, const int16_t in[16]) {
  for (int k = 0; k < 16; ++k) mb.rounding_adjust.luma[4 * (blk >> 2) + (k >> 2)][4 * (blk & 3) + (k & 3)] = in[k];
}

}  // namespace

bool intra4x4_mode_allowed(const EncoderParams& p, int mode) {
  if (p.intra4x4_par_disable && (mode == kI4V || mode == kI4H)) return false;
  if (p.intra4x4_diag_disable && (mode == kI4DDL || mode == kI4DDR)) return false;
  if (p.intra4x4_dir_disable && mode >= kI4VR) return false;
  return true;
}

bool intra16x16_mode_allowed(const EncoderParams& p, int mode) {
  if (p.intra16x16_par_disable && (mode == kI16V || mode == kI16H)) return false;
  if (p.intra16x16_plane_disable && mode == kI16Plane) return false;
  return true;
}

// Chroma intra mode by SATD/SAD of both components plus rate_lambda * se_bits(mode): RDOptimization 0 uses
// rate_lambda = 0 (distortion only); the fast decision of RDOptimization 1 (FastCrIntraDecision) charges
// lambda_mf[Q_PEL] * mvbits[mode] as JM does, i.e. the se(v) length of the mode number.
int decide_chroma_mode(const MbContext& c, int rate_lambda) {
  Edge16 e[2];
  edge_chroma(c, 0, e[0]);
  edge_chroma(c, 1, e[1]);
  uint64_t best = kMaxCost;
  int best_mode = kIcDC;
  for (int mode = kIcDC; mode <= kIcPlane; ++mode) {
    if (c.p->chroma_intra_disable && mode != kIcDC) continue;
    if (!intra_chroma_mode_available(mode, e[0])) continue;
    uint64_t d = 0;
    for (int k = 0; k < 2; ++k) {
      uint8_t pred[64];
      predict_intra_chroma(c.dsp->intra, mode, e[k], pred);
      // The four 4x4 distortions summed: exactly the 8x8 primitive (SATD rounds per 4x4 block).
      d += md_distortion(c, kB8x8, src_chroma(c, k), c.src->plane[1 + k].stride, pred, 8);
    }
    const uint64_t cost = rate_fp(rate_lambda, se_bits(mode)) + dist_fp(d);
    if (cost < best) { best = cost; best_mode = mode; }
  }
  return best_mode;
}

uint64_t decide_intra16x16_mode(const MbContext& c, int* mode, int64_t bound) {
  Edge16 e;
  edge_luma16(c, e);
  uint64_t best = kMaxCost;
  *mode = kI16DC;
  for (int m = kI16V; m <= kI16Plane; ++m) {
    if (!intra16x16_mode_allowed(*c.p, m) || !intra16x16_mode_available(m, e)) continue;
    uint8_t pred[256];
    predict_intra16x16(c.dsp->intra, m, e, pred);
    // A mode costing min(best, bound) or more changes nothing the caller uses (see analyse_intra.h): its
    // distortion may stop at the first row of blocks that reaches ceil(that / 2^16).
    const int64_t limit = std::min<int64_t>(bound, static_cast<int64_t>(std::min<uint64_t>(best, INT64_MAX)));
    uint32_t budget = UINT32_MAX;  // no limit
    if (limit <= 0)
      budget = 0;
    else if (limit < (int64_t{UINT32_MAX} << kLambdaBits))
      budget = static_cast<uint32_t>((limit + (int64_t{1} << kLambdaBits) - 1) >> kLambdaBits);
    uint64_t cost = dist_fp(i16_distortion(c, pred, budget));
    if (cost < best) { best = cost; *mode = m; }
  }
  return best;
}

uint64_t code_intra4x4_blocks(const MbContext& c, MbCoding& mb, bool rd, uint64_t budget) {
  mb.type = MbType::I4x4;
  mb.cbp &= 0x30;
  MbInfo cur;  // modes and coefficient counts of this macroblock as they get decided
  cur.slice_id = c.slice_id;
  const int lam = c.lam.md_factor;
  const Plane& sp = c.src->plane[0];
  Plane& rp = c.rec->plane[0];
  uint64_t total = 0;
  for (int k = 0; k < 16; ++k) {
    const int blk = kDecodeToBlk[k];
    if ((k & 3) == 0) total += rate_fp(lam, 6);  // JM: 6 * lambda per 8x8 (both complexities count it once)
    Edge4x4 e;
    edge_luma4x4(c, blk, e);
    const int mpm = predicted_intra4x4_mode(c, cur, blk);
    const int x = 16 * c.mb_x + 4 * (blk & 3), y = 16 * c.mb_y + 4 * (blk >> 2);
    uint64_t best = kMaxCost;
    int best_mode = kI4DC;
    int best_levels[16] = {};
    uint8_t best_rec[16];
    // AdaptiveRounding, RD: the block's adjustments as they stood right after the best mode's trial (JM
    // store_adaptive_rounding_4x4) - a trial with a zero residual quantises nothing, so that can be an earlier
    // mode's - put back after the loop (update_adaptive_rounding_4x4).
    const bool keep_adjust = rd && c.rounding->adaptive;
    int16_t best_adjust[16] = {};
    // All nine predictions at once; with SATD (the usual MDDistortion) all nine distortions in one call too.
    uint8_t preds[9][16];
    c.dsp->intra.predict_4x4_all(e, preds);
    uint32_t satd[9];
    if (!rd && c.p->md_distortion == 2) c.dsp->pixel.satd_4x4_xn(sp.at(x, y), sp.stride, preds[0], 9, satd);
    for (int mode = 0; mode < 9; ++mode) {
      if (!intra4x4_mode_allowed(*c.p, mode) || !intra4x4_mode_available(mode, e)) continue;
      const uint8_t* pred = preds[mode];
      const int mode_bits = mode == mpm ? 1 : 4;
      uint64_t cost;
      if (!rd) {
        const uint64_t d =
            c.p->md_distortion == 2 ? satd[mode] : md_distortion(c, kB4x4, sp.at(x, y), sp.stride, pred, 4);
        cost = rate_fp(lam, mode_bits) + dist_fp(d);
      } else {
        code_luma4x4(c, blk, pred, mb);
        const uint64_t d = dist_fp(c.dsp->pixel.ssd[kB4x4](sp.at(x, y), sp.stride, rp.at(x, y), rp.stride));
        // JM rdcost_for_4x4_intra_blocks with INTRA_RDCOSTCALC_ET: a distortion already >= the best cost is
        // returned without its rate; the most probable mode wins a tie.
        cost = d >= best ? d : d + rate_fp(lam, mode_bits + luma4x4_coeff_bits(c, cur, blk, mb.luma[blk]));
        if (cost < best || (cost == best && mode == mpm)) {
          best = cost;
          best_mode = mode;
          std::memcpy(best_levels, mb.luma[blk], sizeof(best_levels));
          for (int r = 0; r < 4; ++r) std::memcpy(best_rec + 4 * r, rp.at(x, y + r), 4);
          if (keep_adjust) get_block_adjust(mb, blk, best_adjust);
        }
        continue;
      }
      if (cost < best) { best = cost; best_mode = mode; }
    }
    total += best;
    // The blocks still to come cost at least their mode bit (low complexity: distortion >= 0, mode bits >= 1) and
    // the 8x8 charges, so once the running total plus that floor is over the budget the macroblock has lost
    // whatever they decide: stop before coding this block (see the header for what is left).
    const uint64_t floor_rest = rd ? 0 : rate_fp(lam, (15 - k) + 6 * (3 - k / 4));
    if (total + floor_rest > budget) return total + floor_rest;
    int nz;
    if (!rd) {
      nz = code_luma4x4(c, blk, preds[best_mode], mb);
    } else {
      std::memcpy(mb.luma[blk], best_levels, sizeof(best_levels));
      for (int r = 0; r < 4; ++r) std::memcpy(rp.at(x, y + r), best_rec + 4 * r, 4);
      if (keep_adjust) set_block_adjust(mb, blk, best_adjust);
      nz = 0;
      for (int i = 0; i < 16; ++i) nz += best_levels[i] != 0;
    }
    mb.i4_mode[blk] = static_cast<int8_t>(best_mode);
    cur.intra4x4_mode[blk] = static_cast<int8_t>(best_mode);
    cur.total_coeff[blk] = static_cast<uint8_t>(nz);
    if (nz) mb.cbp |= 1 << ((blk >> 3) * 2 + ((blk & 3) >> 1));
  }
  return total;
}

uint64_t rd_cost_macroblock(const MbContext& c, const MbCoding& mb) {
  uint64_t d = 0;
  if (mb.type != MbType::IPCM) {
    d += c.dsp->pixel.ssd[kB16x16](src_luma(c), c.src->plane[0].stride, rec_luma(c), c.rec->plane[0].stride);
    for (int k = 0; k < 2; ++k)
      d += c.dsp->pixel.ssd[kB8x8](src_chroma(c, k), c.src->plane[1 + k].stride, rec_chroma(c, k),
                                 c.rec->plane[1 + k].stride);
  }
  // One writer per thread, cleared per call: only the length is needed, and a fresh writer allocates its buffer
  // again for every candidate macroblock.
  static thread_local BitWriter bw;
  bw.clear();
  MbInfo scratch;
  MbBits bits;
  write_macroblock(bw, c, mb, scratch, &bits);
  int64_t rate = bw.bits();
  // JM's writeIPCM_CAVLC leaves pcm_alignment_zero_bits out of the rate it returns (they depend on where the
  // macroblock lands in its byte): I_PCM costs mb_type + 384 samples.
  if (mb.type == MbType::IPCM) rate -= bits.coeff_y - 256 * 8;
  return dist_fp(d) + rate_fp(c.lam.md_factor, rate);
}

uint64_t analyse_intra(const MbContext& c, MbCoding& out, double* coding_seconds) {
  const EncoderParams& p = *c.p;
  const bool use_i4 = !p.disable_intra4x4;
  const bool use_i16 = !p.disable_intra16x16 || p.disable_intra4x4;  // one intra type must remain

  if (p.rd_optimization == 0) {
    const int chroma_mode = decide_chroma_mode(c, 0);
    // Intra4x4 wins ties against Intra16x16 (JM tries it first and 16x16 must be strictly better). Deciding
    // 16x16 first (its edges lie outside the macroblock, so the order does not matter to it) gives the 4x4
    // decision a budget: it wins iff its cost is <= cost16, so it can stop as soon as its running total is above.
    int mode16 = kI16DC;
    const uint64_t cost16 = use_i16 ? decide_intra16x16_mode(c, &mode16) : kMaxCost;
    // Intra4x4 straight into `out` (default-constructed); an Intra16x16 winner resets it.
    const uint64_t cost4 = use_i4 ? code_intra4x4_blocks(c, out, false, cost16) : kMaxCost;
    uint64_t best;
    if (use_i4 && cost4 <= cost16) {
      best = cost4;
    } else {
      best = cost16;
      reset_coding(out);
      out.type = MbType::I16x16;
      out.i16_mode = mode16;
    }
    const double t0 = stage_clock_seconds();
    if (out.type == MbType::I16x16) code_intra16x16(c, out);
    out.chroma_mode = chroma_mode;
    code_chroma_intra(c, out);
    if (coding_seconds)
      *coding_seconds += stage_clock_seconds() - t0;
    return best;
  }

  // RDOptimization = 1.
  MbCoding mb4, mb16, pcm;
  LumaSave rec4, rec16, rec_pcm;
  if (use_i4) {
    code_intra4x4_blocks(c, mb4, true);
    save_luma(c, rec4);
  }
  if (use_i16) {
    mb16.type = MbType::I16x16;
    decide_intra16x16_mode(c, &mb16.i16_mode);
    code_intra16x16(c, mb16);
    save_luma(c, rec16);
  }
  ChromaSave rec_chroma_best, rec_chroma_pcm;
  if (p.enable_ipcm) {
    ChromaSave keep;
    save_chroma(c, keep);
    pcm.type = MbType::IPCM;
    code_ipcm(c, pcm);
    save_luma(c, rec_pcm);
    save_chroma(c, rec_chroma_pcm);
    load_chroma(c, keep);
  }
  uint64_t best = kMaxCost;
  int best_kind = -1;  // 0 I16, 1 I4, 2 IPCM
  // md_high.c: FastCrIntraDecision = 1 fixes the chroma mode beforehand (intra_chroma_RD_decision) and the
  // macroblock types compete with it only; with 0 (JM's default) every available chroma mode is a round of its own
  // in which the intra types compete again (JM recodes the luma each round, with the same result), rounds in mode
  // order, a later candidate strictly better.
  int cm_first = kIcDC, cm_last = p.chroma_intra_disable ? kIcDC : kIcPlane;
  if (p.fast_cr_intra_decision) cm_first = cm_last = decide_chroma_mode(c, c.lam.mf[2]);
  Edge16 chroma_edge;
  edge_chroma(c, 0, chroma_edge);
  MbCoding chroma;
  for (int cm = cm_first; cm <= cm_last; ++cm) {
    if (!intra_chroma_mode_available(cm, chroma_edge)) continue;
    reset_coding(chroma);
    chroma.chroma_mode = cm;
    code_chroma_intra(c, chroma);
    // JM md_high.c order: I16MB, I4MB, IPCM (mb_mode_table); a later candidate must be strictly better.
    for (int kind = 0; kind < 3; ++kind) {
      MbCoding* cand = kind == 0 ? (use_i16 ? &mb16 : nullptr) : kind == 1 ? (use_i4 ? &mb4 : nullptr)
                                                                          : (p.enable_ipcm ? &pcm : nullptr);
      if (!cand) continue;
      if (kind == 2) {
        const uint64_t cost = rd_cost_macroblock(c, *cand);
        if (cost < best) { best = cost; best_kind = 2; }
        continue;
      }
      copy_chroma_levels(chroma, *cand);
      load_luma(c, kind == 0 ? rec16 : rec4);
      const uint64_t cost = rd_cost_macroblock(c, *cand);
      if (cost < best) {
        best = cost;
        best_kind = kind;
        out = *cand;
        save_chroma(c, rec_chroma_best);
      }
    }
  }
  if (best_kind == 2) {
    out = pcm;
    load_luma(c, rec_pcm);
    load_chroma(c, rec_chroma_pcm);
  } else {
    load_luma(c, best_kind == 0 ? rec16 : rec4);
    load_chroma(c, rec_chroma_best);
    // AdaptiveRounding: JM's chroma adjustments of the winning type are those of its last round's chroma coding.
    std::memcpy(out.rounding_adjust.chroma, chroma.rounding_adjust.chroma, sizeof(out.rounding_adjust.chroma));
  }
  return best;
}

}  // namespace gme

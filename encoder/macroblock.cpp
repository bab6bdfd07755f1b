#include "encoder/macroblock.h"

#include <cstring>

#include "common/quant.h"
#include "common/residual4x4.h"
#include "common/transform.h"
#include "common/mc.h"
#include "common/mc_planes.h"
#include "encoder/cavlc.h"
#include "encoder/mvpred.h"

namespace gme {

// luma4x4BlkIdx (decoding order: 8x8 quadrants in raster order, 4x4 blocks in raster order inside each).
const uint8_t kBlkToDecode[16] = {0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15};
const uint8_t kDecodeToBlk[16] = {0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15};

namespace {

inline int blk_x(int blk) { return blk & 3; }
inline int blk_y(int blk) { return blk >> 2; }

// The fused per-block residual coding (common/residual4x4.h) of the encoder's function table.
inline const Residual4x4Funcs& r4(const MbContext& c) { return c.dsp->residual4x4; }

void copy4x4(const uint8_t* pred, int pred_stride, uint8_t* dst, int dst_stride) {
  for (int y = 0; y < 4; ++y) std::memcpy(dst + y * dst_stride, pred + y * pred_stride, 4);
}

// A 4x4 block's adjustments (raster) into a macroblock's adjustment plane at (x0, y0); `from` 1 leaves the DC.
template <int W>
void put_adjust(int16_t (*plane)[W], int x0, int y0, const int16_t adj[16], int from = 0) {
  for (int k = from; k < 16; ++k) plane[y0 + (k >> 2)][x0 + (k & 3)] = adj[k];
}

// Forward coding of one luma 4x4 block (first = 0) at raster block blk with the macroblock's offsets of class
// `intra`: the fixed-offset fast path, or with AdaptiveRounding JM's adaptive quantiser, whose adjustments go to
// mb.rounding_adjust unless the residual is zero everywhere (JM's check_zero: the block is not quantised).
int fwd_luma4x4(const MbContext& c, int blk, const uint8_t* src, int ss, const uint8_t* pred, int ps, bool intra,
                MbCoding& mb) {
  const QuantRounding& qr = *c.rounding;
  if (!qr.adaptive) return r4(c).fwd(src, ss, pred, ps, c.qp, qr.luma[intra][0], 0, mb.luma[blk], nullptr);
  int16_t adj[16];
  bool flat = false;
  const int nz = fwd4x4_adaptive(src, ss, pred, ps, c.qp, qr.luma[intra], qr.weight, 0, mb.luma[blk], nullptr, adj,
                                 &flat);
  if (!flat) put_adjust(mb.rounding_adjust.luma, 4 * blk_x(blk), 4 * blk_y(blk), adj);
  return nz;
}

}  // namespace

void edge_luma4x4(const MbContext& c, int blk, Edge4x4& e) {
  const int bx = blk_x(blk), by = blk_y(blk);
  const bool a = c.intra_avail(-1, 0), b = c.intra_avail(0, -1);
  bool left = bx > 0 || a;
  bool top = by > 0 || b;
  bool top_left = (bx > 0 && by > 0) || (bx == 0 && by > 0 && a) || (bx > 0 && by == 0 && b) ||
                  (bx == 0 && by == 0 && c.intra_avail(-1, -1));
  bool top_right;
  if (by == 0) top_right = bx < 3 ? b : c.intra_avail(1, -1);
  else if (bx == 3) top_right = false;
  else top_right = kBlkToDecode[blk - 3] < kBlkToDecode[blk];  // block above-right already decoded?
  const Plane& r = c.rec->plane[0];
  gather_edge4x4(r.at(16 * c.mb_x + 4 * bx, 16 * c.mb_y + 4 * by), r.stride, top, left, top_left, top_right, e);
}

void edge_luma16(const MbContext& c, Edge16& e) {
  const Plane& r = c.rec->plane[0];
  gather_edge16(r.at(16 * c.mb_x, 16 * c.mb_y), r.stride, 16, c.intra_avail(0, -1), c.intra_avail(-1, 0),
                c.intra_avail(-1, -1), e);
}

void edge_chroma(const MbContext& c, int comp, Edge16& e) {
  const Plane& r = c.rec->plane[1 + comp];
  gather_edge16(r.at(8 * c.mb_x, 8 * c.mb_y), r.stride, 8, c.intra_avail(0, -1), c.intra_avail(-1, 0),
                c.intra_avail(-1, -1), e);
}

int code_luma4x4(const MbContext& c, int blk, const uint8_t pred[16], MbCoding& mb) {
  const Plane& sp = c.src->plane[0];
  Plane& rp = c.rec->plane[0];
  const int x = 16 * c.mb_x + 4 * blk_x(blk), y = 16 * c.mb_y + 4 * blk_y(blk);
  const int nz = fwd_luma4x4(c, blk, sp.at(x, y), sp.stride, pred, 4, true, mb);
  if (nz) {
    r4(c).inv(mb.luma[blk], c.qp, 0, nullptr, pred, 4, rp.at(x, y), rp.stride);
  } else {
    copy4x4(pred, 4, rp.at(x, y), rp.stride);
  }
  return nz;
}

void code_intra16x16(const MbContext& c, MbCoding& mb) {
  Edge16 e;
  edge_luma16(c, e);
  uint8_t pred[256];
  predict_intra16x16(c.dsp->intra, mb.i16_mode, e, pred);
  const uint8_t* src = src_luma(c);
  const int ss = c.src->plane[0].stride;
  const QuantRounding& qr = *c.rounding;
  int dc[16];
  bool ac = false;
  if (qr.adaptive) std::memset(mb.rounding_adjust.luma, 0, sizeof(mb.rounding_adjust.luma));
  for (int blk = 0; blk < 16; ++blk) {
    const int off = 4 * blk_x(blk) + 64 * blk_y(blk);
    const uint8_t* s4 = src + 4 * blk_x(blk) + 4 * blk_y(blk) * ss;
    if (!qr.adaptive) {
      ac |= r4(c).fwd(s4, ss, pred + off, 16, c.qp, qr.luma[1][0], 1, mb.luma[blk], &dc[blk]) != 0;
      continue;
    }
    int16_t adj[16];
    ac |= fwd4x4_adaptive(s4, ss, pred + off, 16, c.qp, qr.luma[1], qr.weight, 1, mb.luma[blk], &dc[blk], adj) != 0;
    // JM (block.c residual_transform_quant_luma_16x16) hands every row of blocks the adjustment array of the whole
    // macroblock without the row's offset: each row of blocks writes rows 0..3, the last one stays, rows 4..15 and
    // the DC positions keep 0 - and that is what update_offset_params adds.
    put_adjust(mb.rounding_adjust.luma, 4 * blk_x(blk), 0, adj, 1);
  }
  int dc_t[16];
  fwd_hadamard4x4_dc(dc, dc_t);
  quant_dc4x4(dc_t, c.qp, qr.luma[1][0], mb.luma_dc);
  mb.cbp = (mb.cbp & 0x30) | (ac ? 15 : 0);

  int dcY[16];
  dequant_dc4x4(mb.luma_dc, c.qp, dcY);
  uint8_t* rec = rec_luma(c);
  const int rs = c.rec->plane[0].stride;
  // Without AC every level is 0, so dequantising them all is the same as skipping it.
  for (int blk = 0; blk < 16; ++blk) {
    const int off = 4 * blk_x(blk) + 64 * blk_y(blk);
    r4(c).inv(mb.luma[blk], c.qp, 1, &dcY[blk], pred + off, 16, rec + 4 * blk_x(blk) + 4 * blk_y(blk) * rs, rs);
  }
}

namespace {

// JM's COEFF_COST4x4[0] (lencod/src/block.c): cost of a level +-1 after `run` zeros; larger levels are "expensive".
const int kCoeffCost[16] = {3, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
constexpr int kExpensive = 999999;  // JM MAX_VALUE

int coeff_cost(const int* levels_zz, int first) {
  int cost = 0, run = 0;
  for (int k = first; k < 16; ++k) {
    if (!levels_zz[k]) { ++run; continue; }
    cost += (levels_zz[k] > 1 || levels_zz[k] < -1) ? kExpensive : kCoeffCost[run];
    run = 0;
  }
  return cost;
}

}  // namespace

void code_chroma(const MbContext& c, const uint8_t pred[2][64], MbCoding& mb) {
  const QuantRounding& qr = *c.rounding;
  const bool intra = mb_is_intra(mb.type);
  bool any_dc = false, any_ac = false;
  for (int comp = 0; comp < 2; ++comp) {
    const uint8_t* src = src_chroma(c, comp);
    const int ss = c.src->plane[1 + comp].stride;
    const int16_t* offset = qr.chroma[comp][intra];
    int dc[4];
    bool ac = false;
    int cost = 0;
    for (int b = 0; b < 4; ++b) {
      const int bx = b & 1, by = b >> 1;
      const uint8_t* s4 = src + 4 * bx + 4 * by * ss;
      const uint8_t* p4 = pred[comp] + 4 * bx + 32 * by;
      int nz;
      if (qr.adaptive) {
        // Every AC position is written (JM quantises a zero residual too); the DC positions keep 0.
        int16_t adj[16];
        nz = fwd4x4_adaptive(s4, ss, p4, 8, c.qp_c, offset, qr.weight, 1, mb.chroma_ac[comp][b], &dc[b], adj);
        adj[0] = 0;
        put_adjust(mb.rounding_adjust.chroma[comp], 4 * bx, 4 * by, adj);
      } else {
        nz = r4(c).fwd(s4, ss, p4, 8, c.qp_c, offset[0], 1, mb.chroma_ac[comp][b], &dc[b]);
      }
      if (nz) {
        ac = true;
        cost += coeff_cost(mb.chroma_ac[comp][b], 1);
      }
    }
    // JM chroma thresholding (every macroblock type, DisableThresholding = 0): cheap AC levels are dropped.
    if (ac && cost < 4) {
      std::memset(mb.chroma_ac[comp], 0, sizeof(mb.chroma_ac[comp]));
      ac = false;
    }
    any_ac |= ac;
    int dc_t[4];
    hadamard2x2(dc, dc_t);
    any_dc |= quant_dc2x2(dc_t, c.qp_c, offset[0], mb.chroma_dc[comp]) != 0;
  }
  const int cbp_c = any_ac ? 2 : any_dc ? 1 : 0;
  mb.cbp = (mb.cbp & 15) | (cbp_c << 4);
  for (int comp = 0; comp < 2; ++comp) {
    int dcC[4];
    dequant_dc2x2(mb.chroma_dc[comp], c.qp_c, dcC);
    uint8_t* rec = rec_chroma(c, comp);
    const int rs = c.rec->plane[1 + comp].stride;
    // cbp_c < 2 means every AC level is 0 (never quantised to non-zero, or dropped by the threshold): a block's
    // only coefficient is then its DC, which the inverse transform spreads evenly (add_dc4x4). Most inter
    // macroblocks have no chroma residual at all at QP 28-40, and the full inverse of their 8 blocks was a third
    // of the macroblock's coding.
    for (int b = 0; b < 4; ++b) {
      const int bx = b & 1, by = b >> 1;
      const uint8_t* p = pred[comp] + 4 * bx + 32 * by;
      uint8_t* d = rec + 4 * bx + 4 * by * rs;
      if (cbp_c == 2) r4(c).inv(mb.chroma_ac[comp][b], c.qp_c, 1, &dcC[b], p, 8, d, rs);
      else add_dc4x4(p, 8, dcC[b], d, rs);
    }
  }
}

namespace {

// Partitions of an inter macroblock in decoding order: geometry in 4x4 units.
struct Part { int x, y, w, h; };

int inter_partitions(const MbCoding& mb, Part out[16]) {
  int n = 0;
  switch (mb.type) {
    case MbType::PSkip:
    case MbType::P16x16: out[n++] = {0, 0, 4, 4}; break;
    case MbType::P16x8: out[n++] = {0, 0, 4, 2}; out[n++] = {0, 2, 4, 2}; break;
    case MbType::P8x16: out[n++] = {0, 0, 2, 4}; out[n++] = {2, 0, 2, 4}; break;
    default:
      for (int b8 = 0; b8 < 4; ++b8) {
        const int x = 2 * (b8 & 1), y = 2 * (b8 >> 1);
        switch (mb.sub_type[b8]) {
          case SubMbType::S8x8: out[n++] = {x, y, 2, 2}; break;
          case SubMbType::S8x4: out[n++] = {x, y, 2, 1}; out[n++] = {x, y + 1, 2, 1}; break;
          case SubMbType::S4x8: out[n++] = {x, y, 1, 2}; out[n++] = {x + 1, y, 1, 2}; break;
          case SubMbType::S4x4:
            out[n++] = {x, y, 1, 1}; out[n++] = {x + 1, y, 1, 1};
            out[n++] = {x, y + 1, 1, 1}; out[n++] = {x + 1, y + 1, 1, 1};
            break;
        }
      }
      break;
  }
  return n;
}

}  // namespace

void predict_inter(const MbContext& c, const MbCoding& mb, uint8_t luma[256], uint8_t chroma[2][64]) {
  Part parts[16];
  const int n = inter_partitions(mb, parts);
  for (int i = 0; i < n; ++i) {
    const Part& pt = parts[i];
    const int blk = pt.x + 4 * pt.y;
    const Frame& ref = *c.refs[mb.ref_idx[(pt.x >> 1) + 2 * (pt.y >> 1)]];
    const MV mv = mb.mv[blk];
    predict_luma(c.dsp->mc, luma + 4 * pt.x + 64 * pt.y, 16, ref, 16 * c.mb_x + 4 * pt.x, 16 * c.mb_y + 4 * pt.y, mv,
                 4 * pt.w, 4 * pt.h);
    for (int k = 0; k < 2; ++k)
      c.dsp->mc.chroma(chroma[k] + 2 * pt.x + 16 * pt.y, 8, ref.plane[1 + k], 8 * c.mb_x + 2 * pt.x,
                       8 * c.mb_y + 2 * pt.y, mv, 2 * pt.w, 2 * pt.h);
  }
}

void code_inter(const MbContext& c, const uint8_t luma[256], const uint8_t chroma[2][64], MbCoding& mb) {
  Plane& rp = c.rec->plane[0];
  uint8_t* rec = rec_luma(c);
  if (mb.type == MbType::PSkip) {
    for (int y = 0; y < 16; ++y) std::memcpy(rec + y * rp.stride, luma + 16 * y, 16);
    for (int k = 0; k < 2; ++k) {
      uint8_t* rc = rec_chroma(c, k);
      for (int y = 0; y < 8; ++y) std::memcpy(rc + y * c.rec->plane[1 + k].stride, chroma[k] + 8 * y, 8);
    }
    mb.cbp = 0;
    std::memset(mb.luma, 0, sizeof(mb.luma));
    mb.rounding_adjust = RoundingAdjust();  // nothing is quantised
    return;
  }
  int cbp = 0, mb_cost = 0;
  for (int b8 = 0; b8 < 4; ++b8) {
    const int cost8 = code_inter_luma8x8(c, b8, luma, mb);
    if (cost8) cbp |= 1 << b8;
    mb_cost += cost8;
  }
  if (cbp && mb_cost <= 5) {  // JM _LUMA_MB_COEFF_COST_
    std::memset(mb.luma, 0, sizeof(mb.luma));
    cbp = 0;
  }
  if (cbp == 0) {  // (re)write the prediction: an 8x8 may have been reconstructed before the macroblock threshold
    for (int y = 0; y < 16; ++y) std::memcpy(rec + y * rp.stride, luma + 16 * y, 16);
  }
  mb.cbp = cbp;
  code_chroma(c, chroma, mb);
}

int code_inter_luma8x8(const MbContext& c, int b8, const uint8_t pred[256], MbCoding& mb) {
  const uint8_t* src = src_luma(c);
  const int ss = c.src->plane[0].stride;
  Plane& rp = c.rec->plane[0];
  uint8_t* rec = rec_luma(c);
  int cost8 = 0;
  bool nz8 = false;
  int blks[4];
  for (int i = 0; i < 4; ++i) {
    const int blk = 2 * (b8 & 1) + 8 * (b8 >> 1) + (i & 1) + 4 * (i >> 1);
    blks[i] = blk;
    const int off = 4 * (blk & 3) + 64 * (blk >> 2);
    // A block not quantised (zero residual) keeps the adjustments it had: zero, since each inter macroblock is
    // coded from a fresh MbCoding, as JM's arrays are reset per macroblock and written once per mode.
    if (fwd_luma4x4(c, blk, src + 4 * (blk & 3) + 4 * (blk >> 2) * ss, ss, pred + off, 16, false, mb)) {
      nz8 = true;
      cost8 += coeff_cost(mb.luma[blk], 0);
    }
  }
  if (nz8 && cost8 <= 4) {  // JM _LUMA_COEFF_COST_: a few isolated +-1 levels are not worth their bits
    for (int i = 0; i < 4; ++i) std::memset(mb.luma[blks[i]], 0, sizeof(mb.luma[0]));
    nz8 = false;
  }
  if (!nz8) cost8 = 0;
  for (int i = 0; i < 4; ++i) {
    const int blk = blks[i];
    const int off = 4 * (blk & 3) + 64 * (blk >> 2);
    uint8_t* dst = rec + 4 * (blk & 3) + 4 * (blk >> 2) * rp.stride;
    if (nz8) {
      r4(c).inv(mb.luma[blk], c.qp, 0, nullptr, pred + off, 16, dst, rp.stride);
    } else {
      copy4x4(pred + off, 16, dst, rp.stride);
    }
  }
  return cost8;
}

void compute_mvd(const MbContext& c, MbCoding& mb) {
  MbInfo cur;
  cur.type = MbType::P8x8;
  cur.slice_id = c.slice_id;
  MvPredContext mc{c.mbs, c.mb_w, c.mb_h, c.mb_x, c.mb_y, c.slice_id, &cur};
  Part parts[16];
  const int n = inter_partitions(mb, parts);
  for (int i = 0; i < n; ++i) {
    const Part& pt = parts[i];
    const int b8 = (pt.x >> 1) + 2 * (pt.y >> 1);
    const int ref = mb.ref_idx[b8];
    const MV pred = predict_mv(mc, pt.x, pt.y, pt.w, pt.h, ref);
    const int blk = pt.x + 4 * pt.y;
    mb.mvd[blk] = MV(mb.mv[blk].x - pred.x, mb.mv[blk].y - pred.y);
    for (int y = pt.y; y < pt.y + pt.h; ++y)
      for (int x = pt.x; x < pt.x + pt.w; ++x) cur.ref_idx[(x >> 1) + 2 * (y >> 1)] = static_cast<int8_t>(ref);
    for (int y = pt.y; y < pt.y + pt.h; ++y)
      for (int x = pt.x; x < pt.x + pt.w; ++x) cur.mv[x + 4 * y] = mb.mv[blk];
  }
}

void code_chroma_intra(const MbContext& c, MbCoding& mb) {
  uint8_t pred[2][64];
  for (int comp = 0; comp < 2; ++comp) {
    Edge16 e;
    edge_chroma(c, comp, e);
    predict_intra_chroma(c.dsp->intra, mb.chroma_mode, e, pred[comp]);
  }
  code_chroma(c, pred, mb);
}

void code_ipcm(const MbContext& c, MbCoding& mb) {
  const Plane& sy = c.src->plane[0];
  Plane& ry = c.rec->plane[0];
  for (int y = 0; y < 16; ++y) {
    std::memcpy(mb.pcm + 16 * y, sy.at(16 * c.mb_x, 16 * c.mb_y + y), 16);
    std::memcpy(ry.at(16 * c.mb_x, 16 * c.mb_y + y), mb.pcm + 16 * y, 16);
  }
  for (int comp = 0; comp < 2; ++comp) {
    const Plane& sc = c.src->plane[1 + comp];
    Plane& rc = c.rec->plane[1 + comp];
    for (int y = 0; y < 8; ++y) {
      uint8_t* p = mb.pcm + 256 + 64 * comp + 8 * y;
      std::memcpy(p, sc.at(8 * c.mb_x, 8 * c.mb_y + y), 8);
      std::memcpy(rc.at(8 * c.mb_x, 8 * c.mb_y + y), p, 8);
    }
  }
  mb.cbp = 0;
}

int predicted_intra4x4_mode(const MbContext& c, const MbInfo& cur, int blk) {
  const int bx = blk_x(blk), by = blk_y(blk);
  int mode_a, mode_b;
  if (bx > 0) {
    mode_a = cur.intra4x4_mode[blk - 1];
  } else {
    const MbInfo* a = c.neighbour(-1, 0);
    if (!a || (c.p->constrained_intra_pred && !a->is_intra())) return kI4DC;
    mode_a = a->intra4x4_mode[4 * by + 3];
  }
  if (by > 0) {
    mode_b = cur.intra4x4_mode[blk - 4];
  } else {
    const MbInfo* b = c.neighbour(0, -1);
    if (!b || (c.p->constrained_intra_pred && !b->is_intra())) return kI4DC;
    mode_b = b->intra4x4_mode[12 + bx];
  }
  return mode_a < mode_b ? mode_a : mode_b;
}

namespace {

int luma_nc(const MbContext& c, const MbInfo& cur, int blk) {
  const int bx = blk_x(blk), by = blk_y(blk);
  bool has_a = true, has_b = true;
  int na = 0, nb = 0;
  if (bx > 0) na = cur.total_coeff[blk - 1];
  else if (const MbInfo* a = c.neighbour(-1, 0)) na = a->total_coeff[4 * by + 3];
  else has_a = false;
  if (by > 0) nb = cur.total_coeff[blk - 4];
  else if (const MbInfo* b = c.neighbour(0, -1)) nb = b->total_coeff[12 + bx];
  else has_b = false;
  return predict_nc(has_a, na, has_b, nb);
}

int chroma_nc(const MbContext& c, const MbInfo& cur, int comp, int b) {
  const int bx = b & 1, by = b >> 1;
  bool has_a = true, has_b = true;
  int na = 0, nb = 0;
  if (bx > 0) na = cur.total_coeff_chroma[comp][b - 1];
  else if (const MbInfo* a = c.neighbour(-1, 0)) na = a->total_coeff_chroma[comp][2 * by + 1];
  else has_a = false;
  if (by > 0) nb = cur.total_coeff_chroma[comp][b - 2];
  else if (const MbInfo* t = c.neighbour(0, -1)) nb = t->total_coeff_chroma[comp][2 + bx];
  else has_b = false;
  return predict_nc(has_a, na, has_b, nb);
}

int mb_type_code(const MbContext& c, const MbCoding& mb) {
  const int intra_base = c.p_slice ? 5 : 0;
  switch (mb.type) {
    case MbType::I4x4: return intra_base + kMbTypeI4x4;
    case MbType::I16x16: return intra_base + mb_type_i16x16(mb.i16_mode, mb.cbp >> 4, (mb.cbp & 15) != 0);
    case MbType::IPCM: return intra_base + kMbTypeIPCM;
    case MbType::P16x16: return 0;
    case MbType::P16x8: return 1;
    case MbType::P8x16: return 2;
    case MbType::P8x8:
      // JM (MBType2Value with ZeroRef, CAVLC): a P8x8 whose four references are all 0 is written as P_8x8ref0,
      // which leaves out the ref_idx fields.
      return (mb.ref_idx[0] | mb.ref_idx[1] | mb.ref_idx[2] | mb.ref_idx[3]) == 0 ? 4 : 3;
    default: return 4;  // P8x8Ref0 (never chosen)
  }
}

// First raster 4x4 block of each partition, in mb_pred / sub_mb_pred order.
int partition_blocks(const MbCoding& mb, int out[16]) {
  int n = 0;
  switch (mb.type) {
    case MbType::P16x16: out[n++] = 0; break;
    case MbType::P16x8: out[n++] = 0; out[n++] = 8; break;
    case MbType::P8x16: out[n++] = 0; out[n++] = 2; break;
    default:
      for (int b8 = 0; b8 < 4; ++b8) {
        const int o = 2 * (b8 & 1) + 8 * (b8 >> 1);
        switch (mb.sub_type[b8]) {
          case SubMbType::S8x8: out[n++] = o; break;
          case SubMbType::S8x4: out[n++] = o; out[n++] = o + 4; break;
          case SubMbType::S4x8: out[n++] = o; out[n++] = o + 1; break;
          case SubMbType::S4x4: out[n++] = o; out[n++] = o + 1; out[n++] = o + 4; out[n++] = o + 5; break;
        }
      }
      break;
  }
  return n;
}

}  // namespace

int luma4x4_coeff_bits(const MbContext& c, const MbInfo& cur, int blk, const int levels[16]) {
  return residual_block_bits(levels, 16, luma_nc(c, cur, blk));
}

void fill_mbinfo(const MbContext& c, const MbCoding& mb, MbInfo& info) {
  info.type = mb.type;
  info.slice_id = c.slice_id;
  info.qp = mb.type == MbType::IPCM ? 0 : c.qp;
  info.cbp = static_cast<uint8_t>(mb.cbp);
  for (int i = 0; i < 16; ++i) info.intra4x4_mode[i] = mb.type == MbType::I4x4 ? mb.i4_mode[i] : static_cast<int8_t>(kI4DC);
  if (mb_is_intra(mb.type)) {
    for (int i = 0; i < 4; ++i) { info.ref_idx[i] = -1; info.ref_id[i] = -1; info.sub_type[i] = SubMbType::S8x8; }
    for (int i = 0; i < 16; ++i) info.mv[i] = MV();
  } else {
    for (int i = 0; i < 4; ++i) {
      info.ref_idx[i] = mb.ref_idx[i];
      info.ref_id[i] = c.refs ? c.refs[mb.ref_idx[i]]->id : -1;
      info.sub_type[i] = mb.sub_type[i];
    }
    for (int i = 0; i < 16; ++i) info.mv[i] = mb.mv[i];
  }
}

void add_bits(PictureBitUse& use, const MbBits& bits, MbType type) {
  use.mode += bits.mode;
  use.motion += bits.motion;
  use.motion_by_type[static_cast<int>(type)] += bits.motion;
  use.cbp += bits.cbp;
  use.dquant += bits.dquant;
  use.coeff_y += bits.coeff_y;
  use.coeff_c += bits.coeff_c;
}

int64_t write_macroblock(BitWriter& bw, const MbContext& c, const MbCoding& mb, MbInfo& info, MbBits* bits) {
  const int64_t start = bw.bits();
  // JM's categories (macroblock.c writeMBLayer*, write_chroma_intra_pred_mode, writeCBPandDquant): each section's
  // bits go to the field `to` names.
  MbBits acc;
  int64_t mark = start;
  auto take = [&](int& to) {
    to += static_cast<int>(bw.bits() - mark);
    mark = bw.bits();
  };
  auto done = [&] {
    if (bits) *bits = acc;
    return bw.bits() - start;
  };
  fill_mbinfo(c, mb, info);
  std::memset(info.total_coeff, 0, sizeof(info.total_coeff));
  std::memset(info.total_coeff_chroma, 0, sizeof(info.total_coeff_chroma));
  info.nonzero_luma_mask = 0;

  bw.ue(static_cast<uint32_t>(mb_type_code(c, mb)));
  take(acc.mode);
  if (mb.type == MbType::IPCM) {
    bw.align_zero();
    for (int i = 0; i < 256; ++i) bw.put(8, mb.pcm[i]);
    take(acc.coeff_y);
    for (int i = 256; i < 384; ++i) bw.put(8, mb.pcm[i]);
    take(acc.coeff_c);
    std::memset(info.total_coeff, 16, sizeof(info.total_coeff));
    std::memset(info.total_coeff_chroma, 16, sizeof(info.total_coeff_chroma));
    info.nonzero_luma_mask = 0xFFFF;
    return done();
  }
  const bool intra = mb_is_intra(mb.type);
  if (mb.type == MbType::P8x8)
    for (int b8 = 0; b8 < 4; ++b8) bw.ue(static_cast<uint32_t>(mb.sub_type[b8]));
  if (mb.type == MbType::I4x4) {
    for (int k = 0; k < 16; ++k) {
      const int blk = kDecodeToBlk[k];
      const int pred = predicted_intra4x4_mode(c, info, blk);
      const int mode = mb.i4_mode[blk];
      if (mode == pred) {
        bw.put(1, 1);
      } else {
        bw.put(1, 0);
        bw.put(3, static_cast<uint32_t>(mode < pred ? mode : mode - 1));
      }
    }
  }
  take(acc.mode);  // sub_mb_types, Intra4x4 modes
  if (intra) {
    bw.ue(static_cast<uint32_t>(mb.chroma_mode));
    take(acc.coeff_c);  // JM counts intra_chroma_pred_mode with the chroma coefficients
  } else {
    int first[16];
    const int n = partition_blocks(mb, first);
    const int nparts8 = mb.type == MbType::P16x16 ? 1 : (mb.type == MbType::P8x8 ? 4 : 2);
    if (c.num_ref_idx_active > 1 && mb_type_code(c, mb) != 4) {
      for (int i = 0; i < nparts8; ++i) {
        const int b8 = mb.type == MbType::P16x8 ? 2 * i : i;  // the partition's first 8x8
        bw.te(c.num_ref_idx_active - 1, static_cast<uint32_t>(mb.ref_idx[b8]));
      }
    }
    for (int i = 0; i < n; ++i) {
      bw.se(mb.mvd[first[i]].x);
      bw.se(mb.mvd[first[i]].y);
    }
    take(acc.motion);
  }
  if (mb.type != MbType::I16x16) bw.ue(static_cast<uint32_t>(cbp_code_num(mb.cbp, intra)));
  take(acc.cbp);
  if (mb.cbp == 0 && mb.type != MbType::I16x16) return done();

  bw.se(0);  // mb_qp_delta: one QP per picture
  take(acc.dquant);

  if (mb.type == MbType::I16x16) {
    write_residual_block(bw, mb.luma_dc, 16, luma_nc(c, info, 0));
    bool any_dc = false;
    for (int k = 0; k < 16; ++k) any_dc |= mb.luma_dc[k] != 0;
    if (any_dc) info.nonzero_luma_mask = 0xFFFF;  // the DC spreads over every 4x4 block (deblocking bS)
  }
  for (int k = 0; k < 16; ++k) {
    const int blk = kDecodeToBlk[k];
    if (!(mb.cbp & (1 << (blk_y(blk) / 2 * 2 + blk_x(blk) / 2)))) continue;
    int n;
    if (mb.type == MbType::I16x16) n = write_residual_block(bw, mb.luma[blk] + 1, 15, luma_nc(c, info, blk));
    else n = write_residual_block(bw, mb.luma[blk], 16, luma_nc(c, info, blk));
    info.total_coeff[blk] = static_cast<uint8_t>(n);
    if (n) info.nonzero_luma_mask |= static_cast<uint16_t>(1 << blk);
  }
  take(acc.coeff_y);
  const int cbp_c = mb.cbp >> 4;
  if (cbp_c) {
    for (int comp = 0; comp < 2; ++comp) write_residual_block(bw, mb.chroma_dc[comp], 4, -1);
  }
  if (cbp_c == 2) {
    for (int comp = 0; comp < 2; ++comp)
      for (int b = 0; b < 4; ++b) {
        int n = write_residual_block(bw, mb.chroma_ac[comp][b] + 1, 15, chroma_nc(c, info, comp, b));
        info.total_coeff_chroma[comp][b] = static_cast<uint8_t>(n);
      }
  }
  take(acc.coeff_c);
  return done();
}

}  // namespace gme

// Deblocking filter, H.264 clause 8.7 (frame pictures, 4:2:0, 4x4 transform). Written from the standard's text;
// the per-macroblock order is: boundary strengths for all 32 luma edge segments, luma vertical edges left to right,
// luma horizontal edges top to bottom, then the chroma edges of both components in the same order.
#include "common/deblock.h"
#include "common/deblock_simd.h"
#include "common/quant.h"  // chroma_qp: Table 8-15, shared with the chroma residual

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace gme {
namespace {

// Table 8-16: alpha' and beta' by indexA / indexB.
constexpr uint8_t kAlpha[52] = {
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,   0,   0,   4,   4,   5,   6,   7,   8,   9,   10,  12,  13,
    15, 17, 20, 22, 25, 28, 32, 36, 40, 45, 50, 56, 63, 71, 80, 90, 101, 113, 127, 144, 162, 182, 203, 226, 255, 255};
constexpr uint8_t kBeta[52] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  0,  0,  0,  2,  2,  2,  3,  3,  3,  3,  4,  4,  4,
    6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17, 17, 18, 18};
// Table 8-17: tC0' for bS = 1, 2, 3 by indexA (all zero below 17).
constexpr uint8_t kTc0[52][3] = {
    {0, 0, 0},   {0, 0, 0},   {0, 0, 0},   {0, 0, 0},    {0, 0, 0},    {0, 0, 0},    {0, 0, 0},  {0, 0, 0},
    {0, 0, 0},   {0, 0, 0},   {0, 0, 0},   {0, 0, 0},    {0, 0, 0},    {0, 0, 0},    {0, 0, 0},  {0, 0, 0},
    {0, 0, 0},   {0, 0, 1},   {0, 0, 1},   {0, 0, 1},    {0, 0, 1},    {0, 1, 1},    {0, 1, 1},  {1, 1, 1},
    {1, 1, 1},   {1, 1, 1},   {1, 1, 1},   {1, 1, 2},    {1, 1, 2},    {1, 1, 2},    {1, 1, 2},  {1, 2, 3},
    {1, 2, 3},   {2, 2, 3},   {2, 2, 4},   {2, 3, 4},    {2, 3, 4},    {3, 3, 5},    {3, 4, 6},  {3, 4, 6},
    {4, 5, 7},   {4, 5, 8},   {4, 6, 9},   {5, 7, 10},   {6, 8, 11},   {6, 8, 13},   {7, 10, 14}, {8, 11, 16},
    {9, 12, 18}, {10, 13, 20}, {11, 15, 23}, {13, 17, 25}};

inline int iabs(int v) { return v < 0 ? -v : v; }

// One line across a luma edge; see deblock_luma_line.
inline void luma_line(uint8_t* q, int step, int bs, int alpha, int beta, int tc0) {
  const int p0 = q[-step], q0 = q[0];
  const int p1 = q[-2 * step], q1 = q[step];
  if (iabs(p0 - q0) >= alpha || iabs(p1 - p0) >= beta || iabs(q1 - q0) >= beta) return;
  const int p2 = q[-3 * step], q2 = q[2 * step];
  const bool ap = iabs(p2 - p0) < beta;
  const bool aq = iabs(q2 - q0) < beta;
  if (bs < 4) {
    const int tc = tc0 + ap + aq;
    const int delta = clip3(-tc, tc, (((q0 - p0) * 4) + (p1 - q1) + 4) >> 3);
    q[-step] = clip_pixel(p0 + delta);
    q[0] = clip_pixel(q0 - delta);
    if (ap) q[-2 * step] = static_cast<uint8_t>(p1 + clip3(-tc0, tc0, (p2 + ((p0 + q0 + 1) >> 1) - (p1 * 2)) >> 1));
    if (aq) q[step] = static_cast<uint8_t>(q1 + clip3(-tc0, tc0, (q2 + ((p0 + q0 + 1) >> 1) - (q1 * 2)) >> 1));
    return;
  }
  // bS = 4: strong filter where the signal is smooth on that side, else the 3-tap one.
  const bool small_gap = iabs(p0 - q0) < ((alpha >> 2) + 2);
  if (ap && small_gap) {
    const int p3 = q[-4 * step];
    q[-step] = static_cast<uint8_t>((p2 + 2 * p1 + 2 * p0 + 2 * q0 + q1 + 4) >> 3);
    q[-2 * step] = static_cast<uint8_t>((p2 + p1 + p0 + q0 + 2) >> 2);
    q[-3 * step] = static_cast<uint8_t>((2 * p3 + 3 * p2 + p1 + p0 + q0 + 4) >> 3);
  } else {
    q[-step] = static_cast<uint8_t>((2 * p1 + p0 + q1 + 2) >> 2);
  }
  if (aq && small_gap) {
    const int q3 = q[3 * step];
    q[0] = static_cast<uint8_t>((p1 + 2 * p0 + 2 * q0 + 2 * q1 + q2 + 4) >> 3);
    q[step] = static_cast<uint8_t>((p0 + q0 + q1 + q2 + 2) >> 2);
    q[2 * step] = static_cast<uint8_t>((2 * q3 + 3 * q2 + q1 + q0 + p0 + 4) >> 3);
  } else {
    q[0] = static_cast<uint8_t>((2 * q1 + q0 + p1 + 2) >> 2);
  }
}

inline void chroma_line(uint8_t* q, int step, int bs, int alpha, int beta, int tc0) {
  const int p0 = q[-step], q0 = q[0];
  const int p1 = q[-2 * step], q1 = q[step];
  if (iabs(p0 - q0) >= alpha || iabs(p1 - p0) >= beta || iabs(q1 - q0) >= beta) return;
  if (bs < 4) {
    const int tc = tc0 + 1;
    const int delta = clip3(-tc, tc, (((q0 - p0) * 4) + (p1 - q1) + 4) >> 3);
    q[-step] = clip_pixel(p0 + delta);
    q[0] = clip_pixel(q0 - delta);
  } else {
    q[-step] = static_cast<uint8_t>((2 * p1 + p0 + q1 + 2) >> 2);
    q[0] = static_cast<uint8_t>((2 * q1 + q0 + p1 + 2) >> 2);
  }
}

struct EdgeParams {
  int alpha, beta, index_a;
};

inline EdgeParams edge_params(int qp_av, int offset_a, int offset_b) {
  const int ia = clip3(0, 51, qp_av + offset_a);
  const int ib = clip3(0, 51, qp_av + offset_b);
  return {kAlpha[ia], kBeta[ib], ia};
}

// tC0 of each segment of an edge (Table 8-17; 0 for bS 0 and 4), and whether the SIMD filters take the edge: they
// want its bS all 4 or all below 4, which is what the bS rules give the 16 lines of a macroblock edge in frame coding.
inline bool edge_tc0(const uint8_t bs[4], const EdgeParams& e, uint8_t tc0[4]) {
  for (int s = 0; s < 4; ++s) tc0[s] = bs[s] && bs[s] < 4 ? kTc0[e.index_a][bs[s] - 1] : 0;
  const bool all4 = bs[0] == 4 && bs[1] == 4 && bs[2] == 4 && bs[3] == 4;
  const bool none4 = bs[0] < 4 && bs[1] < 4 && bs[2] < 4 && bs[3] < 4;
  return all4 || none4;
}

// One luma edge of a macroblock: the table's filter, or the plain one for an edge of mixed bS 4 and below 4.
inline void luma_edge(const DeblockFuncs& f, uint8_t* q0, int across, int along, const uint8_t bs[4],
                      const EdgeParams& e) {
  if (e.alpha == 0 || e.beta == 0) return;  // no line can pass |p0 - q0| < alpha
  uint8_t tc0[4];
  const bool uniform = edge_tc0(bs, e, tc0);
  (uniform ? f.luma_edge : deblock_luma_edge_c)(q0, across, along, bs, tc0, e.alpha, e.beta);
}

// One chroma edge of both planes, as luma_edge.
inline void chroma_edges(const DeblockFuncs& f, uint8_t* cb, uint8_t* cr, int across, int along, const uint8_t bs[4],
                         const EdgeParams& e) {
  if (e.alpha == 0 || e.beta == 0) return;
  uint8_t tc0[4];
  const bool uniform = edge_tc0(bs, e, tc0);
  (uniform ? f.chroma_edges : deblock_chroma_edges_c)(cb, cr, across, along, bs, tc0, e.alpha, e.beta);
}

inline int bs_inter(const MbInfo& p, int blk_p, const MbInfo& q, int blk_q) {
  if (((p.nonzero_luma_mask >> blk_p) & 1) || ((q.nonzero_luma_mask >> blk_q) & 1)) return 2;
  const int i8p = ((blk_p & 3) >> 1) + 2 * (blk_p >> 3);
  const int i8q = ((blk_q & 3) >> 1) + 2 * (blk_q >> 3);
  // P macroblocks carry exactly one motion vector per partition, so only the pictures and vectors can differ.
  if (p.ref_id[i8p] != q.ref_id[i8q]) return 1;
  const MV a = p.mv[blk_p], b = q.mv[blk_q];
  if (iabs(a.x - b.x) >= 4 || iabs(a.y - b.y) >= 4) return 1;
  return 0;
}

// bS for the 4 segments of each of the 4 edges in both directions: bs[dir][edge][segment], dir 0 vertical edges
// (segment = 4x4 row), dir 1 horizontal edges (segment = 4x4 column). left / top: the neighbour macroblock whose
// edge is filtered, or null when that macroblock edge is not filtered.
void compute_bs(const MbInfo& q, const MbInfo* left, const MbInfo* top, uint8_t bs[2][4][4]) {
  if (q.is_intra()) {
    for (int d = 0; d < 2; ++d)
      for (int e = 0; e < 4; ++e)
        for (int s = 0; s < 4; ++s) bs[d][e][s] = e == 0 ? 4 : 3;
    return;
  }
  for (int s = 0; s < 4; ++s) {
    // Macroblock edges.
    if (left) bs[0][0][s] = left->is_intra() ? 4 : static_cast<uint8_t>(bs_inter(*left, 4 * s + 3, q, 4 * s));
    if (top) bs[1][0][s] = top->is_intra() ? 4 : static_cast<uint8_t>(bs_inter(*top, 12 + s, q, s));
    // Internal edges.
    for (int e = 1; e < 4; ++e) {
      bs[0][e][s] = static_cast<uint8_t>(bs_inter(q, 4 * s + e - 1, q, 4 * s + e));
      bs[1][e][s] = static_cast<uint8_t>(bs_inter(q, 4 * (e - 1) + s, q, 4 * e + s));
    }
  }
}

}  // namespace

int deblock_alpha(int index_a) { return kAlpha[clip3(0, 51, index_a)]; }
int deblock_beta(int index_b) { return kBeta[clip3(0, 51, index_b)]; }
int deblock_tc0(int index_a, int bs) {
  if (bs < 1 || bs > 3) return 0;
  return kTc0[clip3(0, 51, index_a)][bs - 1];
}

int deblock_bs(const MbInfo& p, int blk_p, const MbInfo& q, int blk_q, bool mb_edge) {
  if (p.is_intra() || q.is_intra()) return mb_edge ? 4 : 3;
  return bs_inter(p, blk_p, q, blk_q);
}

void deblock_luma_line(uint8_t* q0, int step, int bs, int alpha, int beta, int tc0) {
  if (bs <= 0) return;
  luma_line(q0, step, bs, alpha, beta, tc0);
}

void deblock_luma_edge_c(uint8_t* q0, int across, int along, const uint8_t bs[4], const uint8_t tc0[4], int alpha,
                         int beta) {
  if (alpha == 0 || beta == 0) return;
  for (int s = 0; s < 4; ++s) {
    if (bs[s] == 0) continue;
    uint8_t* l = q0 + 4 * s * along;
    for (int i = 0; i < 4; ++i, l += along) luma_line(l, across, bs[s], alpha, beta, tc0[s]);
  }
}

void deblock_chroma_edges_c(uint8_t* cb, uint8_t* cr, int across, int along, const uint8_t bs[4], const uint8_t tc0[4],
                            int alpha, int beta) {
  if (alpha == 0 || beta == 0) return;
  for (uint8_t* c : {cb, cr})
    for (int s = 0; s < 4; ++s) {  // chroma line k takes the bS of luma line 2k, i.e. segment k / 2
      if (bs[s] == 0) continue;
      uint8_t* l = c + 2 * s * along;
      chroma_line(l, across, bs[s], alpha, beta, tc0[s]);
      chroma_line(l + along, across, bs[s], alpha, beta, tc0[s]);
    }
}

void deblock_init(uint32_t cpu, DeblockFuncs& f) {
  f = {deblock_luma_edge_c, deblock_chroma_edges_c};
#if defined(GME_X86_SIMD)
  if (cpu & kCpuSse2) f = {deblock_luma_edge_sse2, deblock_chroma_edges_sse2};
#else
  (void)cpu;
#endif
}

void deblock_chroma_line(uint8_t* q0, int step, int bs, int alpha, int beta, int tc0) {
  if (bs <= 0) return;
  chroma_line(q0, step, bs, alpha, beta, tc0);
}

MacroblockDeblocker::MacroblockDeblocker(const DeblockFuncs& f, Frame& pic, const MbInfo* mbs, int mb_width,
                                         const std::vector<SliceDeblockParams>& params, int chroma_qp_offset)
    : f_(f), pic_(pic), mbs_(mbs), mb_width_(mb_width), params_(params) {
  // QP_C per macroblock is needed for both sides of every chroma edge: a small table by QP_Y saves the lookups.
  for (int q = 0; q < 52; ++q) qpc_of_[q] = chroma_qp(q, chroma_qp_offset);
}

void MacroblockDeblocker::filter(int mx, int my) const {
  Plane& py = pic_.plane[0];
  Plane& pu = pic_.plane[1];
  Plane& pv = pic_.plane[2];
  const int ys = py.stride, cs = pu.stride;
  const int* qpc_of = qpc_of_;
  const MbInfo* mbs = mbs_;
  const int mb_width = mb_width_;
  const MbInfo& q = mbs[my * mb_width + mx];
  if (q.slice_id < 0) return;
  if (static_cast<size_t>(q.slice_id) >= params_.size())
    throw std::logic_error("deblock_picture: no SliceDeblockParams for slice " + std::to_string(q.slice_id));
  const SliceDeblockParams& sp = params_[q.slice_id];
  if (sp.disable_idc == 1) return;
  const bool slice_edges = sp.disable_idc != 2;  // idc 2: macroblocks of other slices count as unavailable
  const MbInfo* left = mx > 0 ? &mbs[my * mb_width + mx - 1] : nullptr;
  const MbInfo* top = my > 0 ? &mbs[(my - 1) * mb_width + mx] : nullptr;
  if (left && (left->slice_id < 0 || (!slice_edges && left->slice_id != q.slice_id))) left = nullptr;
  if (top && (top->slice_id < 0 || (!slice_edges && top->slice_id != q.slice_id))) top = nullptr;

  uint8_t bs[2][4][4];
  compute_bs(q, left, top, bs);
  const int off_a = sp.alpha_offset_div2 * 2, off_b = sp.beta_offset_div2 * 2;
  const int qp_q = clip3(0, 51, q.qp);
  const int qpc_q = qpc_of[qp_q];

  uint8_t* yq = py.at(mx * 16, my * 16);
  uint8_t* uq = pu.at(mx * 8, my * 8);
  uint8_t* vq = pv.at(mx * 8, my * 8);

  const EdgeParams inner = edge_params(qp_q, off_a, off_b);
  const EdgeParams inner_c = edge_params(qpc_q, off_a, off_b);

  // Luma vertical edges, then horizontal.
  if (left) luma_edge(f_, yq, 1, ys, bs[0][0], edge_params((clip3(0, 51, left->qp) + qp_q + 1) >> 1, off_a, off_b));
  for (int e = 1; e < 4; ++e) luma_edge(f_, yq + 4 * e, 1, ys, bs[0][e], inner);
  if (top) luma_edge(f_, yq, ys, 1, bs[1][0], edge_params((clip3(0, 51, top->qp) + qp_q + 1) >> 1, off_a, off_b));
  for (int e = 1; e < 4; ++e) luma_edge(f_, yq + 4 * e * ys, ys, 1, bs[1][e], inner);

  // Chroma: edges at chroma 0 and 4 use the bS of luma edges 0 and 2. Each side's QP_C comes from its own QP_Y.
  // Both planes at once: they share QP_C (one chroma_qp_index_offset) and bS.
  if (left) chroma_edges(f_, uq, vq, 1, cs, bs[0][0], edge_params((qpc_of[clip3(0, 51, left->qp)] + qpc_q + 1) >> 1, off_a, off_b));
  chroma_edges(f_, uq + 4, vq + 4, 1, cs, bs[0][2], inner_c);
  if (top) chroma_edges(f_, uq, vq, cs, 1, bs[1][0], edge_params((qpc_of[clip3(0, 51, top->qp)] + qpc_q + 1) >> 1, off_a, off_b));
  chroma_edges(f_, uq + 4 * cs, vq + 4 * cs, cs, 1, bs[1][2], inner_c);
}

void deblock_picture(const DeblockFuncs& f, Frame& pic, const MbInfo* mbs, int mb_width, int mb_height,
                     const std::vector<SliceDeblockParams>& params, int chroma_qp_offset) {
  const MacroblockDeblocker d(f, pic, mbs, mb_width, params, chroma_qp_offset);
  for (int my = 0; my < mb_height; ++my)
    for (int mx = 0; mx < mb_width; ++mx) d.filter(mx, my);
}

}  // namespace gme

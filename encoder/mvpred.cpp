#include "encoder/mvpred.h"

namespace gme {
namespace {

using Neighbour = MvNeighbour;

inline int median3(int a, int b, int c) {
  int lo = a < b ? a : b, hi = a < b ? b : a;
  return c < lo ? lo : (c > hi ? hi : c);
}

// Decoding order inside a macroblock: 8x8 quadrants in raster order, and inside a quadrant the sub-partitions in
// raster order (= z-order of its 4x4 blocks). Partitions larger than 8x8 never have C inside the macroblock.
inline int decode_rank(int bx, int by) { return 4 * ((bx >> 1) + 2 * (by >> 1)) + (bx & 1) + 2 * (by & 1); }

// Neighbour at 4x4 position (nx, ny) relative to the current macroblock (-1..4). `inside_ok` tells whether a
// position inside the current macroblock is already decoded. Forced inline: predict_mv runs for every partition
// query of mode decision (three or four neighbours each) and the call was its largest cost.
[[gnu::always_inline]] inline Neighbour neighbour_at(const MvPredContext& c, int nx, int ny, bool inside_ok) {
  Neighbour n;
  const MbInfo* mb;
  if (nx >= 0 && nx < 4 && ny >= 0 && ny < 4) {
    if (!inside_ok) return n;
    mb = c.cur;
  } else {
    int dx = nx < 0 ? -1 : (nx > 3 ? 1 : 0);
    int dy = ny < 0 ? -1 : (ny > 3 ? 1 : 0);
    // Only left, above, above-right and above-left macroblocks precede the current one; the right and lower
    // ones are never available (6.4.12: xN > maxW - 1 with yN >= 0 is unavailable).
    if (dy > 0 || (dy == 0 && dx > 0)) return n;
    int mx = c.mb_x + dx, my = c.mb_y + dy;
    if (mx < 0 || mx >= c.mb_width || my < 0) return n;
    mb = &c.mbs[my * c.mb_width + mx];
    if (mb->slice_id != c.slice_id) return n;
    nx &= 3;
    ny &= 3;
  }
  n.available = true;
  // The current macroblock's type is not decided yet: its decided partitions are known by ref_idx alone.
  if (mb != c.cur && mb->is_intra()) return n;
  int r = mb->ref_idx[(nx >> 1) + 2 * (ny >> 1)];
  if (r < 0) return n;
  n.ref = r;
  n.mv = mb->mv[nx + 4 * ny];
  return n;
}

// C (above-right of the partition at bx, by, bw wide): inside the macroblock it is available only if decoded
// before this partition.
inline bool c_inside_decoded(int bx, int by, int bw) {
  const int cx = bx + bw, cy = by - 1;
  return cx < 4 && cy >= 0 && decode_rank(cx, cy) < decode_rank(bx, by);
}

// 8.4.1.3 from the gathered neighbours A, B and C (already replaced by D where C is unavailable).
[[gnu::always_inline]] inline MV predict_from(Neighbour a, Neighbour b, Neighbour cn, int bx, int by, int bw, int bh, int ref_idx) {
  // Directional rules for 16x8 and 8x16 (8.4.1.3, before the median rule).
  if (bw == 4 && bh == 2) {
    if (by == 0 && b.ref == ref_idx) return b.mv;
    if (by == 2 && a.ref == ref_idx) return a.mv;
  } else if (bw == 2 && bh == 4) {
    if (bx == 0 && a.ref == ref_idx) return a.mv;
    if (bx == 2 && cn.ref == ref_idx) return cn.mv;
  }
  // Median (8.4.1.3.1): with B and C both unavailable and A available, B and C take A's values.
  if (!b.available && !cn.available && a.available) b = cn = a;
  int matches = (a.ref == ref_idx) + (b.ref == ref_idx) + (cn.ref == ref_idx);
  if (matches == 1) {
    if (a.ref == ref_idx) return a.mv;
    if (b.ref == ref_idx) return b.mv;
    return cn.mv;
  }
  return MV(median3(a.mv.x, b.mv.x, cn.mv.x), median3(a.mv.y, b.mv.y, cn.mv.y));
}

}  // namespace

MV predict_mv(const MvPredContext& c, int bx, int by, int bw, int bh, int ref_idx) {
  const Neighbour a = neighbour_at(c, bx - 1, by, true);
  const Neighbour b = neighbour_at(c, bx, by - 1, true);
  Neighbour cn = neighbour_at(c, bx + bw, by - 1, c_inside_decoded(bx, by, bw));
  if (!cn.available) cn = neighbour_at(c, bx - 1, by - 1, true);  // C -> D
  return predict_from(a, b, cn, bx, by, bw, bh, ref_idx);
}

MvPredCache::MvPredCache(const MvPredContext& c) : cur_(c.cur) {
  for (int x = -1; x <= 4; ++x) above_[x + 1] = neighbour_at(c, x, -1, false);
  for (int y = 0; y < 4; ++y) left_[y] = neighbour_at(c, -1, y, false);
}

// A position inside the macroblock that is already decoded (as neighbour_at with inside_ok). Inline: predict()
// asks for up to three per query, ~40 queries per macroblock.
[[gnu::always_inline]] inline MvNeighbour MvPredCache::inside(int x, int y) const {
  Neighbour n;
  n.available = true;
  const int r = cur_->ref_idx[(x >> 1) + 2 * (y >> 1)];
  if (r < 0) return n;
  n.ref = r;
  n.mv = cur_->mv[x + 4 * y];
  return n;
}

MV MvPredCache::predict(int bx, int by, int bw, int bh, int ref_idx) const {
  const Neighbour a = bx > 0 ? inside(bx - 1, by) : left_[by];
  const Neighbour b = by > 0 ? inside(bx, by - 1) : above_[bx + 1];
  const int cx = bx + bw;
  Neighbour cn;  // right of the macroblock below its top row: never available
  if (by == 0) cn = above_[cx + 1];
  else if (c_inside_decoded(bx, by, bw)) cn = inside(cx, by - 1);
  if (!cn.available) {  // C -> D
    if (by == 0) cn = above_[bx];
    else cn = bx > 0 ? inside(bx - 1, by - 1) : left_[by - 1];
  }
  return predict_from(a, b, cn, bx, by, bw, bh, ref_idx);
}

MV predict_skip_mv(const MvPredContext& c) {
  Neighbour a = neighbour_at(c, -1, 0, false);
  Neighbour b = neighbour_at(c, 0, -1, false);
  if (!a.available || !b.available) return MV(0, 0);
  if (a.ref == 0 && a.mv == MV(0, 0)) return MV(0, 0);
  if (b.ref == 0 && b.mv == MV(0, 0)) return MV(0, 0);
  return predict_mv(c, 0, 0, 4, 4, 0);
}

}  // namespace gme

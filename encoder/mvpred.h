// Motion vector prediction (H.264 8.4.1.3) and the P_Skip vector (8.4.1.1), for the single reference list of
// baseline P slices. Neighbours come from the picture's MbInfo array (other slices and macroblocks not yet coded
// are unavailable) and, inside the current macroblock, from its partially decided state.
#pragma once
#include "common/mbinfo.h"
#include "common/types.h"

namespace gme {

// Neighbour view for motion vector prediction: the picture's MbInfo array (a macroblock whose slice_id differs
// from slice_id - another slice, or -1 for not yet coded - is unavailable), and the current macroblock's
// partially decided state `cur` (ref_idx per 8x8, mv per 4x4 for partitions already decided, in decoding order).
// Of `cur` only ref_idx and mv are read (its type is not decided yet); which of its blocks count as decided is
// derived from the partition's position (decoding order), so stale values elsewhere in `cur` are never used.
// Neighbouring macroblocks: intra ones are available with refIdx -1 and mv (0,0); P_Skip ones must carry
// ref_idx 0 and their skip vector.
struct MvPredContext {
  const MbInfo* mbs;
  int mb_width, mb_height;
  int mb_x, mb_y;
  int slice_id;
  const MbInfo* cur;
};

// Predictor for the partition at (bx, by) of size (bw, bh) in 4x4 units with reference ref_idx, including the
// 16x8 / 8x16 directional rules and the availability of C inside the macroblock by decoding order.
MV predict_mv(const MvPredContext& c, int bx, int by, int bw, int bh, int ref_idx);

// P_Skip motion vector (8.4.1.1).
MV predict_skip_mv(const MvPredContext& c);

// What 8.4.1.3.2 derives for one neighbouring partition: whether it is available at all (this decides the C->D
// substitution and the "only A available" rule), and its refIdx / mv as prediction sees them (-1 / (0,0) for
// unavailable and intra neighbours).
struct MvNeighbour {
  bool available = false;
  int ref = -1;
  MV mv;
};

// predict_mv for many partitions of one macroblock (mode decision asks for every partition and reference, ~40
// times per macroblock): the neighbours outside the macroblock are looked up once, at construction, and only
// the current macroblock's state (c.cur, which must outlive the cache and may change between calls) is read per
// call. Same results as predict_mv with the same context.
class MvPredCache {
 public:
  explicit MvPredCache(const MvPredContext& c);
  MV predict(int bx, int by, int bw, int bh, int ref_idx) const;

 private:
  MvNeighbour inside(int x, int y) const;
  MvNeighbour above_[6];  // 4x4 row above the macroblock, x = -1..4 (D of block 0, B, then C of the last column)
  MvNeighbour left_[4];   // 4x4 column left of the macroblock, y = 0..3
  const MbInfo* cur_;
};

}  // namespace gme

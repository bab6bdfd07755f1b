// All nine Intra4x4 predictions at once (the mode decision tries every mode of every block). Every sample of
// every mode of 8.3.1.2 is one of: an edge sample, a 2-tap average (E[i] + E[i+1] + 1) >> 1, a 3-tap filter
// (E[i-1] + 2 E[i] + E[i+1] + 2) >> 2 over the edge line E = l3 l2 l1 l0 q t0 .. t7, one of two corner formulas
// or the DC. Those values are computed once per block into V[] and the modes are gathered through an index table
// built at start-up from the per-mode equations, instead of nine separate branchy per-sample loops.
#include <cstring>

#include "common/intra_pred.h"

namespace gme {
namespace {

// V[] layout.
constexpr int kE = 0;        // E[0..12]: l3 l2 l1 l0 q t0 .. t7
constexpr int kF2 = 13;      // F2(i) = (E[i] + E[i+1] + 1) >> 1, i = 0..11
constexpr int kF3 = 25;      // F3(i) = (E[i-1] + 2 E[i] + E[i+1] + 2) >> 2, i = 1..11 (slot 0 unused)
constexpr int kDdlLast = 37; // DDL (3,3): (t6 + 3 t7 + 2) >> 2
constexpr int kHuZ5 = 38;    // HU z = 5: (l2 + 3 l3 + 2) >> 2
constexpr int kDc = 39;
constexpr int kVSize = 40;

struct IndexTable {
  uint8_t idx[9][16];
  IndexTable() {
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) {
        const int i = 4 * y + x;
        idx[kI4V][i] = kE + 5 + x;
        idx[kI4H][i] = kE + 3 - y;
        idx[kI4DC][i] = kDc;
        idx[kI4DDL][i] = (x == 3 && y == 3) ? kDdlLast : kF3 + 6 + x + y;
        idx[kI4DDR][i] = kF3 + 4 + x - y;
        const int zvr = 2 * x - y;
        idx[kI4VR][i] = zvr >= 0 ? ((zvr & 1) ? kF3 : kF2) + 4 + x - (y >> 1) : zvr == -1 ? kF3 + 4 : kF3 + 5 - y;
        const int zhd = 2 * y - x;
        idx[kI4HD][i] = zhd >= 0 ? ((zhd & 1) ? kF3 + 4 - y + (x >> 1) : kF2 + 3 - y + (x >> 1))
                                 : zhd == -1 ? kF3 + 4 : kF3 + 3 + x;
        const int k = x + (y >> 1);
        idx[kI4VL][i] = (y & 1) ? kF3 + 6 + k : kF2 + 5 + k;
        const int zhu = x + 2 * y, j = y + (x >> 1);
        idx[kI4HU][i] = zhu > 5 ? kE + 0 : zhu == 5 ? kHuZ5 : (zhu & 1) ? kF3 + 2 - j : kF2 + 2 - j;
      }
  }
};
const IndexTable kTable;

}  // namespace

void predict_intra4x4_all(const Edge4x4& e, uint8_t pred[9][16]) {
  int E[13];
  for (int i = 0; i < 4; ++i) E[i] = e.left[3 - i];
  E[4] = e.top_left;
  for (int i = 0; i < 8; ++i) E[5 + i] = e.top[i];
  uint8_t v[kVSize] = {};
  for (int i = 0; i < 13; ++i) v[kE + i] = static_cast<uint8_t>(E[i]);
  for (int i = 0; i < 12; ++i) v[kF2 + i] = static_cast<uint8_t>((E[i] + E[i + 1] + 1) >> 1);
  for (int i = 1; i < 12; ++i) v[kF3 + i] = static_cast<uint8_t>((E[i - 1] + 2 * E[i] + E[i + 1] + 2) >> 2);
  v[kDdlLast] = static_cast<uint8_t>((E[11] + 3 * E[12] + 2) >> 2);
  v[kHuZ5] = static_cast<uint8_t>((E[1] + 3 * E[0] + 2) >> 2);
  const int st = E[5] + E[6] + E[7] + E[8], sl = E[0] + E[1] + E[2] + E[3];
  int dc = 128;
  if (e.has_top && e.has_left) dc = (st + sl + 4) >> 3;
  else if (e.has_left) dc = (sl + 2) >> 2;
  else if (e.has_top) dc = (st + 2) >> 2;
  v[kDc] = static_cast<uint8_t>(dc);
  for (int m = 0; m < 9; ++m)
    for (int i = 0; i < 16; ++i) pred[m][i] = v[kTable.idx[m][i]];
}

}  // namespace gme

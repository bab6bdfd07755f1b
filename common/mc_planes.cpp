#include "common/mc_planes.h"

#include <cstring>

#include "common/halfpel.h"
#include "common/mc.h"

namespace gme {
namespace {

// dst = p1, w (4, 8 or 16) bytes per row: fixed-size copies the compiler turns into single moves.
template <int W>
void copy_block(uint8_t* dst, int ds, const uint8_t* p, int ps, int h) {
  for (int y = 0; y < h; ++y, dst += ds, p += ps) std::memcpy(dst, p, W);
}

}  // namespace

void mc_luma_planes(const McFuncs& f, uint8_t* dst, int dst_stride, const HalfpelPlanes& planes, const Plane& ref,
                    int x, int y, MV mv, int w, int h) {
  const int X = x + (mv.x >> 2), Y = y + (mv.y >> 2);  // the full-pel sample G at or left/above of the position
  if (!planes.covers(X, Y, w, h)) {
    mc_luma(dst, dst_stride, ref, x, y, mv, w, h);
    return;
  }
  const int s = planes.g.stride;
  const uint8_t* g = planes.g.at(X, Y);
  const uint8_t* b = planes.b.at(X, Y);
  const uint8_t* hh = planes.h.at(X, Y);
  const uint8_t* j = planes.j.at(X, Y);
  const uint8_t *p1, *p2 = nullptr;
  switch ((mv.y & 3) * 4 + (mv.x & 3)) {  // Table 8-12 names
    case 0: p1 = g; break;                         // G
    case 1: p1 = g; p2 = b; break;                 // a
    case 2: p1 = b; break;                         // b
    case 3: p1 = g + 1; p2 = b; break;             // c
    case 4: p1 = g; p2 = hh; break;                // d
    case 5: p1 = b; p2 = hh; break;                // e
    case 6: p1 = b; p2 = j; break;                 // f
    case 7: p1 = b; p2 = hh + 1; break;            // g
    case 8: p1 = hh; break;                        // h
    case 9: p1 = hh; p2 = j; break;                // i
    case 10: p1 = j; break;                        // j
    case 11: p1 = j; p2 = hh + 1; break;           // k
    case 12: p1 = g + s; p2 = hh; break;           // n
    case 13: p1 = hh; p2 = b + s; break;           // p
    case 14: p1 = j; p2 = b + s; break;            // q
    default: p1 = hh + 1; p2 = b + s; break;       // r
  }
  // Rows of the planes can be read 16 bytes at a time wherever HalfpelPlanes::covers() holds.
  if (p2) f.avg(dst, dst_stride, p1, p2, s, w, h);
  else if (w == 16) copy_block<16>(dst, dst_stride, p1, s, h);
  else if (w == 8) copy_block<8>(dst, dst_stride, p1, s, h);
  else copy_block<4>(dst, dst_stride, p1, s, h);
}

void predict_luma(const McFuncs& f, uint8_t* dst, int dst_stride, const Frame& ref, int x, int y, MV mv, int w, int h) {
  if (ref.halfpel)
    mc_luma_planes(f, dst, dst_stride, *ref.halfpel, ref.plane[0], x, y, mv, w, h);
  else
    mc_luma(dst, dst_stride, ref.plane[0], x, y, mv, w, h);
}

}  // namespace gme

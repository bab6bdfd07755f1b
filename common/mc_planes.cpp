#include "common/mc_planes.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/halfpel.h"
#include "common/mc.h"

namespace gme {
namespace {

// dst = p1 (p2 == nullptr) or (p1 + p2 + 1) >> 1, w bytes per row (exactly: dst rows hold neighbouring blocks).
void copy_or_average(uint8_t* dst, int ds, const uint8_t* p1, const uint8_t* p2, int ps, int w, int h) {
  for (int y = 0; y < h; ++y, dst += ds, p1 += ps, p2 = p2 ? p2 + ps : nullptr) {
#if defined(__SSE2__)
    // Rows of the planes can be read 16 bytes at a time wherever HalfpelPlanes::covers() holds.
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p1));
    if (p2) v = _mm_avg_epu8(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p2)));  // (a + b + 1) >> 1
    if (w == 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), v);
    } else if (w == 8) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), v);
    } else {
      const int32_t four = _mm_cvtsi128_si32(v);
      std::memcpy(dst, &four, 4);
    }
#else
    for (int x = 0; x < w; ++x) dst[x] = p2 ? static_cast<uint8_t>((p1[x] + p2[x] + 1) >> 1) : p1[x];
#endif
  }
}

}  // namespace

void mc_luma_planes(uint8_t* dst, int dst_stride, const HalfpelPlanes& planes, const Plane& ref, int x, int y, MV mv,
                    int w, int h) {
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
  copy_or_average(dst, dst_stride, p1, p2, s, w, h);
}

void predict_luma(uint8_t* dst, int dst_stride, const Frame& ref, int x, int y, MV mv, int w, int h) {
  if (ref.halfpel)
    mc_luma_planes(dst, dst_stride, *ref.halfpel, ref.plane[0], x, y, mv, w, h);
  else
    mc_luma(dst, dst_stride, ref.plane[0], x, y, mv, w, h);
}

}  // namespace gme

#include "common/intra_pred.h"

#include <cstring>

#include "common/intra_pred_simd.h"
#include "common/types.h"

#if defined(GME_X86_SIMD)
#include <emmintrin.h>
#endif

namespace gme {

bool intra16x16_mode_available(int mode, const Edge16& e) {
  switch (mode) {
    case kI16V: return e.has_top;
    case kI16H: return e.has_left;
    case kI16DC: return true;
    default: return e.has_top && e.has_left && e.has_top_left;
  }
}

bool intra_chroma_mode_available(int mode, const Edge16& e) {
  switch (mode) {
    case kIcDC: return true;
    case kIcH: return e.has_left;
    case kIcV: return e.has_top;
    default: return e.has_top && e.has_left && e.has_top_left;
  }
}

void predict_intra4x4(int mode, const Edge4x4& e, uint8_t pred[16]) {
  const uint8_t* t = e.top;
  const uint8_t* l = e.left;
  const int q = e.top_left;
  auto P = [&](int x, int y) -> int {  // p[x, y] with x, y in -1..7
    if (y < 0) return x < 0 ? q : t[x];
    return l[y];
  };
  switch (mode) {
    case kI4V:
      for (int y = 0; y < 4; ++y) std::memcpy(pred + 4 * y, t, 4);
      break;
    case kI4H:
      for (int y = 0; y < 4; ++y) std::memset(pred + 4 * y, l[y], 4);
      break;
    case kI4DC: {
      int s;
      if (e.has_top && e.has_left) s = (t[0] + t[1] + t[2] + t[3] + l[0] + l[1] + l[2] + l[3] + 4) >> 3;
      else if (e.has_left) s = (l[0] + l[1] + l[2] + l[3] + 2) >> 2;
      else if (e.has_top) s = (t[0] + t[1] + t[2] + t[3] + 2) >> 2;
      else s = 128;
      std::memset(pred, s, 16);
      break;
    }
    case kI4DDL:
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x)
          pred[4 * y + x] = static_cast<uint8_t>(
              (x == 3 && y == 3) ? (t[6] + 3 * t[7] + 2) >> 2 : (t[x + y] + 2 * t[x + y + 1] + t[x + y + 2] + 2) >> 2);
      break;
    case kI4DDR:
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) {
          int v;
          if (x > y) v = (P(x - y - 2, -1) + 2 * P(x - y - 1, -1) + P(x - y, -1) + 2) >> 2;
          else if (x < y) v = (P(-1, y - x - 2) + 2 * P(-1, y - x - 1) + P(-1, y - x) + 2) >> 2;
          else v = (P(0, -1) + 2 * q + P(-1, 0) + 2) >> 2;
          pred[4 * y + x] = static_cast<uint8_t>(v);
        }
      break;
    case kI4VR:
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) {
          int z = 2 * x - y, v;
          if (z >= 0 && !(z & 1)) v = (P(x - (y >> 1) - 1, -1) + P(x - (y >> 1), -1) + 1) >> 1;
          else if (z >= 0) v = (P(x - (y >> 1) - 2, -1) + 2 * P(x - (y >> 1) - 1, -1) + P(x - (y >> 1), -1) + 2) >> 2;
          else if (z == -1) v = (P(-1, 0) + 2 * q + P(0, -1) + 2) >> 2;
          else v = (P(-1, y - 1) + 2 * P(-1, y - 2) + P(-1, y - 3) + 2) >> 2;
          pred[4 * y + x] = static_cast<uint8_t>(v);
        }
      break;
    case kI4HD:
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) {
          int z = 2 * y - x, v;
          if (z >= 0 && !(z & 1)) v = (P(-1, y - (x >> 1) - 1) + P(-1, y - (x >> 1)) + 1) >> 1;
          else if (z >= 0) v = (P(-1, y - (x >> 1) - 2) + 2 * P(-1, y - (x >> 1) - 1) + P(-1, y - (x >> 1)) + 2) >> 2;
          else if (z == -1) v = (P(-1, 0) + 2 * q + P(0, -1) + 2) >> 2;
          else v = (P(x - 1, -1) + 2 * P(x - 2, -1) + P(x - 3, -1) + 2) >> 2;
          pred[4 * y + x] = static_cast<uint8_t>(v);
        }
      break;
    case kI4VL:
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) {
          int i = x + (y >> 1), v;
          if (!(y & 1)) v = (t[i] + t[i + 1] + 1) >> 1;
          else v = (t[i] + 2 * t[i + 1] + t[i + 2] + 2) >> 2;
          pred[4 * y + x] = static_cast<uint8_t>(v);
        }
      break;
    case kI4HU:
    default:
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) {
          int z = x + 2 * y, v;
          if (z > 5) v = l[3];
          else if (z == 5) v = (l[2] + 3 * l[3] + 2) >> 2;
          else if (!(z & 1)) v = (l[y + (x >> 1)] + l[y + (x >> 1) + 1] + 1) >> 1;
          else v = (l[y + (x >> 1)] + 2 * l[y + (x >> 1) + 1] + l[y + (x >> 1) + 2] + 2) >> 2;
          pred[4 * y + x] = static_cast<uint8_t>(v);
        }
      break;
  }
}

namespace {
// Plane parameters (8.3.3.4 / 8.3.4.4 for 4:2:0): pred[y][x] = clip((a + b (x - (n/2 - 1)) + c (y - (n/2 - 1)) + 16) >> 5).
struct PlaneParams { int a, b, c; };
PlaneParams plane_params(const Edge16& e, int n) {
  const int half = n / 2;
  int h = 0, v = 0;
  for (int i = 0; i < half; ++i) {
    int a = e.top[half + i];
    int b = (half - 2 - i >= 0) ? e.top[half - 2 - i] : e.top_left;
    h += (i + 1) * (a - b);
    int c = e.left[half + i];
    int d = (half - 2 - i >= 0) ? e.left[half - 2 - i] : e.top_left;
    v += (i + 1) * (c - d);
  }
  const int a = 16 * (e.left[n - 1] + e.top[n - 1]);
  if (n == 16) return {a, (5 * h + 32) >> 6, (5 * v + 32) >> 6};
  return {a, (34 * h + 32) >> 6, (34 * v + 32) >> 6};
}

#if defined(GME_X86_SIMD)
// Every intermediate fits 16 bits: |a| <= 8160, |b (x - 7)| <= 717 * 8 for 16x16 (|H| <= 36 * 255) and
// |b (x - 3)| <= 1355 * 4 for chroma (|H| <= 10 * 255), so a + b x' + c y' + 16 stays within +-19650; psraw is the
// arithmetic shift and packuswb the clip to [0, 255].
void predict_plane_sse2(const Edge16& e, int n, uint8_t* pred) {
  const PlaneParams q = plane_params(e, n);
  const int o = n / 2 - 1;
  const __m128i xs = _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7);
  const __m128i b = _mm_set1_epi16(static_cast<int16_t>(q.b)), c = _mm_set1_epi16(static_cast<int16_t>(q.c));
  // Row 0 at x = 0..7 and 8..15, then + c per row.
  __m128i lo = _mm_add_epi16(_mm_set1_epi16(static_cast<int16_t>(q.a - q.b * o - q.c * o + 16)), _mm_mullo_epi16(b, xs));
  __m128i hi = _mm_add_epi16(lo, _mm_slli_epi16(b, 3));
  for (int y = 0; y < n; ++y) {
    const __m128i l = _mm_srai_epi16(lo, 5);
    if (n == 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(pred + 16 * y), _mm_packus_epi16(l, _mm_srai_epi16(hi, 5)));
    } else {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(pred + 8 * y), _mm_packus_epi16(l, l));
    }
    lo = _mm_add_epi16(lo, c);
    hi = _mm_add_epi16(hi, c);
  }
}
#endif
}  // namespace

// The plain reference: the standard's formula sample by sample.
void predict_plane_c(const Edge16& e, int n, uint8_t* pred) {
  const PlaneParams q = plane_params(e, n);
  const int o = n / 2 - 1;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) pred[n * y + x] = clip_pixel((q.a + q.b * (x - o) + q.c * (y - o) + 16) >> 5);
}

void intra_pred_init(uint32_t cpu, IntraPredFuncs& f) {
  f = {predict_intra4x4_all_c, predict_plane_c};
#if defined(GME_X86_SIMD)
  if (cpu & kCpuSse2) f.predict_plane = predict_plane_sse2;
  if (cpu & kCpuSsse3) f.predict_4x4_all = predict_intra4x4_all_ssse3;
#else
  (void)cpu;
#endif
}

void predict_intra16x16(const IntraPredFuncs& f, int mode, const Edge16& e, uint8_t pred[256]) {
  switch (mode) {
    case kI16V:
      for (int y = 0; y < 16; ++y) std::memcpy(pred + 16 * y, e.top, 16);
      break;
    case kI16H:
      for (int y = 0; y < 16; ++y) std::memset(pred + 16 * y, e.left[y], 16);
      break;
    case kI16DC: {
      int st = 0, sl = 0, s;
      for (int i = 0; i < 16; ++i) { st += e.top[i]; sl += e.left[i]; }
      if (e.has_top && e.has_left) s = (st + sl + 16) >> 5;
      else if (e.has_left) s = (sl + 8) >> 4;
      else if (e.has_top) s = (st + 8) >> 4;
      else s = 128;
      std::memset(pred, s, 256);
      break;
    }
    default:
      f.predict_plane(e, 16, pred);
      break;
  }
}

void predict_intra_chroma(const IntraPredFuncs& f, int mode, const Edge16& e, uint8_t pred[64]) {
  switch (mode) {
    case kIcDC:
      // Per 4x4 chroma block (8.3.4.1..3): corner blocks use both edges, the top-right block prefers the top
      // edge, the bottom-left block prefers the left edge.
      for (int by = 0; by < 2; ++by)
        for (int bx = 0; bx < 2; ++bx) {
          int st = 0, sl = 0, s;
          for (int i = 0; i < 4; ++i) { st += e.top[4 * bx + i]; sl += e.left[4 * by + i]; }
          const int top = (st + 2) >> 2, left = (sl + 2) >> 2;
          if (bx == 1 && by == 0) s = e.has_top ? top : e.has_left ? left : 128;
          else if (bx == 0 && by == 1) s = e.has_left ? left : e.has_top ? top : 128;
          else if (e.has_top && e.has_left) s = (st + sl + 4) >> 3;
          else s = e.has_left ? left : e.has_top ? top : 128;
          for (int y = 0; y < 4; ++y) std::memset(pred + 8 * (4 * by + y) + 4 * bx, s, 4);
        }
      break;
    case kIcH:
      for (int y = 0; y < 8; ++y) std::memset(pred + 8 * y, e.left[y], 8);
      break;
    case kIcV:
      for (int y = 0; y < 8; ++y) std::memcpy(pred + 8 * y, e.top, 8);
      break;
    default:
      f.predict_plane(e, 8, pred);
      break;
  }
}

void gather_edge4x4(const uint8_t* p, int stride, bool has_top, bool has_left, bool has_top_left, bool has_top_right,
                    Edge4x4& e) {
  e.has_top = has_top;
  e.has_left = has_left;
  e.has_top_left = has_top_left;
  if (has_top) {
    std::memcpy(e.top, p - stride, 4);
    if (has_top_right) std::memcpy(e.top + 4, p - stride + 4, 4);
    else std::memset(e.top + 4, e.top[3], 4);
  } else {
    std::memset(e.top, 128, 8);
  }
  if (has_left) for (int y = 0; y < 4; ++y) e.left[y] = p[y * stride - 1];
  else std::memset(e.left, 128, 4);
  e.top_left = has_top_left ? p[-stride - 1] : 128;
}

void gather_edge16(const uint8_t* p, int stride, int n, bool has_top, bool has_left, bool has_top_left, Edge16& e) {
  e.has_top = has_top;
  e.has_left = has_left;
  e.has_top_left = has_top_left;
  if (has_top) std::memcpy(e.top, p - stride, n);
  else std::memset(e.top, 128, 16);
  if (has_left) for (int y = 0; y < n; ++y) e.left[y] = p[y * stride - 1];
  else std::memset(e.left, 128, 16);
  e.top_left = has_top_left ? p[-stride - 1] : 128;
}

}  // namespace gme

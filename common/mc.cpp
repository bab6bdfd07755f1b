#include "common/mc.h"

#include <cstdint>
#include <cstring>

#include "common/cpu.h"

#if defined(GME_X86_SIMD)
#include <emmintrin.h>
#endif

namespace gme {
namespace {

// 6-tap filter (1, -5, 20, 20, -5, 1) over samples p[-2*step] .. p[3*step]: the unscaled intermediate value
// (b1, h1 in 8.4.2.2.1); the half-pel sample lies between p[0] and p[step].
inline int tap6(const uint8_t* p, int step) {
  return p[-2 * step] - 5 * p[-step] + 20 * p[0] + 20 * p[step] - 5 * p[2 * step] + p[3 * step];
}
inline int tap6i(const int* p, int step) {
  return p[-2 * step] - 5 * p[-step] + 20 * p[0] + 20 * p[step] - 5 * p[2 * step] + p[3 * step];
}
inline uint8_t avg(int a, int b) { return static_cast<uint8_t>((a + b + 1) >> 1); }

constexpr int kMax = 16;

}  // namespace

void mc_luma(uint8_t* dst, int dst_stride, const Plane& ref, int x, int y, MV mv, int w, int h) {
  const int fx = mv.x & 3, fy = mv.y & 3;
  const uint8_t* src = luma_fetch_origin(ref, x + (mv.x >> 2), y + (mv.y >> 2));
  const int s = ref.stride;

  if (fx == 0 && fy == 0) {
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i) dst[j * dst_stride + i] = src[j * s + i];
    return;
  }
  // Only the half-pel planes the position needs are computed; each has one extra row/column because the
  // quarter-pel samples next to the right / lower neighbour (c, n, g, k, p, q, r) read m = h(x+1) and s = b(y+1).
  uint8_t bp[kMax + 1][kMax + 1], hp[kMax + 1][kMax + 1], jp[kMax][kMax];
  const bool use_b = fx != 0 && fy != 2;
  const bool use_h = fy != 0 && fx != 2;
  const bool use_j = (fx == 2 && fy != 0) || (fy == 2 && fx != 0);
  if (use_b)
    for (int j = 0; j < h + (fy == 3); ++j)
      for (int i = 0; i < w; ++i) bp[j][i] = clip_pixel((tap6(src + j * s + i, 1) + 16) >> 5);
  if (use_h)
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w + (fx == 3); ++i) hp[j][i] = clip_pixel((tap6(src + j * s + i, s) + 16) >> 5);
  if (use_j) {
    // j from the unrounded horizontal intermediates b1 of rows -2..h+2 (the standard allows either direction;
    // both give the same value).
    int b1[kMax + 5][kMax];
    for (int j = 0; j < h + 5; ++j)
      for (int i = 0; i < w; ++i) b1[j][i] = tap6(src + (j - 2) * s + i, 1);
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i) jp[j][i] = clip_pixel((tap6i(&b1[j + 2][i], kMax) + 512) >> 10);
  }
  for (int j = 0; j < h; ++j) {
    const uint8_t* g = src + j * s;
    uint8_t* d = dst + j * dst_stride;
    for (int i = 0; i < w; ++i) {
      int v;
      switch (fy * 4 + fx) {
        case 1: v = avg(g[i], bp[j][i]); break;               // a
        case 2: v = bp[j][i]; break;                          // b
        case 3: v = avg(g[i + 1], bp[j][i]); break;           // c
        case 4: v = avg(g[i], hp[j][i]); break;               // d
        case 5: v = avg(bp[j][i], hp[j][i]); break;           // e
        case 6: v = avg(bp[j][i], jp[j][i]); break;           // f
        case 7: v = avg(bp[j][i], hp[j][i + 1]); break;       // g
        case 8: v = hp[j][i]; break;                          // h
        case 9: v = avg(hp[j][i], jp[j][i]); break;           // i
        case 10: v = jp[j][i]; break;                         // j
        case 11: v = avg(jp[j][i], hp[j][i + 1]); break;      // k
        case 12: v = avg(g[i + s], hp[j][i]); break;          // n
        case 13: v = avg(hp[j][i], bp[j + 1][i]); break;      // p
        case 14: v = avg(jp[j][i], bp[j + 1][i]); break;      // q
        default: v = avg(hp[j][i + 1], bp[j + 1][i]); break;  // r (15)
      }
      d[i] = static_cast<uint8_t>(v);
    }
  }
}

namespace {
// The chroma block's source origin and weights (8.4.2.2.2): bilinear support is one sample right/below the block,
// and clamping the origin to [-pad, size + pad - 9] keeps the reads inside the border and, for blocks up to 8 wide,
// gives the values of unbounded edge replication.
struct ChromaTap {
  const uint8_t* src;
  int wa, wb, wc, wd;
};
ChromaTap chroma_tap(const Plane& ref, int cx, int cy, MV mv) {
  const int fx = mv.x & 7, fy = mv.y & 7;
  const int x0 = clip3(-ref.pad, ref.width + ref.pad - 9, cx + (mv.x >> 3));
  const int y0 = clip3(-ref.pad, ref.height + ref.pad - 9, cy + (mv.y >> 3));
  return {ref.at(x0, y0), (8 - fx) * (8 - fy), fx * (8 - fy), (8 - fx) * fy, fx * fy};
}
}  // namespace

void mc_chroma_c(uint8_t* dst, int dst_stride, const Plane& ref, int cx, int cy, MV mv, int w, int h) {
  const ChromaTap t = chroma_tap(ref, cx, cy, mv);
  const int s = ref.stride;
  for (int j = 0; j < h; ++j) {
    const uint8_t* p = t.src + j * s;
    for (int i = 0; i < w; ++i)
      dst[j * dst_stride + i] =
          static_cast<uint8_t>((t.wa * p[i] + t.wb * p[i + 1] + t.wc * p[i + s] + t.wd * p[i + s + 1] + 32) >> 6);
  }
}

namespace {

void avg_rows_c(uint8_t* dst, int ds, const uint8_t* a, const uint8_t* b, int s, int w, int h) {
  for (int y = 0; y < h; ++y, dst += ds, a += s, b += s)
    for (int x = 0; x < w; ++x) dst[x] = static_cast<uint8_t>((a[x] + b[x] + 1) >> 1);
}

#if defined(GME_X86_SIMD)
// Eight samples of a row at once in 16-bit lanes (the weighted sum is at most 64 * 255 + 32). Each source row is
// loaded once as p[0..7] and p[1..8] (two 8-byte loads: nothing past the 9 samples the bilinear support reads) and
// serves as the lower row of one output row and the upper row of the next; w < 8 stores only w bytes.
void mc_chroma_sse2(uint8_t* dst, int dst_stride, const Plane& ref, int cx, int cy, MV mv, int w, int h) {
  const ChromaTap t = chroma_tap(ref, cx, cy, mv);
  const int s = ref.stride;
  const __m128i zero = _mm_setzero_si128();
  const __m128i wa = _mm_set1_epi16(static_cast<int16_t>(t.wa)), wb = _mm_set1_epi16(static_cast<int16_t>(t.wb));
  const __m128i wc = _mm_set1_epi16(static_cast<int16_t>(t.wc)), wd = _mm_set1_epi16(static_cast<int16_t>(t.wd));
  const __m128i r32 = _mm_set1_epi16(32);
  auto load = [zero](const uint8_t* p) {
    return _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), zero);
  };
  __m128i a0 = load(t.src), a1 = load(t.src + 1);
  for (int j = 0; j < h; ++j) {
    const uint8_t* p = t.src + (j + 1) * s;
    const __m128i b0 = load(p), b1 = load(p + 1);
    __m128i v = _mm_add_epi16(_mm_add_epi16(_mm_mullo_epi16(a0, wa), _mm_mullo_epi16(a1, wb)),
                              _mm_add_epi16(_mm_mullo_epi16(b0, wc), _mm_mullo_epi16(b1, wd)));
    v = _mm_srli_epi16(_mm_add_epi16(v, r32), 6);
    const __m128i packed = _mm_packus_epi16(v, v);
    uint8_t* d = dst + j * dst_stride;
    if (w == 8) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d), packed);
    } else {
      const uint32_t four = static_cast<uint32_t>(_mm_cvtsi128_si32(packed));
      if (w == 4) std::memcpy(d, &four, 4);
      else std::memcpy(d, &four, 2);
    }
    a0 = b0;
    a1 = b1;
  }
}

// pavgb is exactly (a + b + 1) >> 1; the rows are read 16 bytes wide, w bytes stored.
void avg_rows_sse2(uint8_t* dst, int ds, const uint8_t* a, const uint8_t* b, int s, int w, int h) {
  for (int y = 0; y < h; ++y, dst += ds, a += s, b += s) {
    const __m128i v = _mm_avg_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)),
                                   _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)));
    if (w == 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), v);
    } else if (w == 8) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), v);
    } else {
      const int32_t four = _mm_cvtsi128_si32(v);
      std::memcpy(dst, &four, 4);
    }
  }
}
#endif

}  // namespace

void mc_init(uint32_t cpu, McFuncs& f) {
  f = {mc_chroma_c, avg_rows_c};
#if defined(GME_X86_SIMD)
  if (cpu & kCpuSse2) f = {mc_chroma_sse2, avg_rows_sse2};
#else
  (void)cpu;
#endif
}

}  // namespace gme

#include "common/halfpel.h"

#include <atomic>
#include <cstring>
#include <vector>

#include "common/cpu.h"

#if defined(GME_X86_SIMD)
#include <immintrin.h>
#endif

namespace gme {
namespace {

// (p0 + p5) - 5 (p1 + p4) + 20 (p2 + p3): the 6-tap filter of 8.4.2.2.1.
template <typename T>
inline int tap6(T p0, T p1, T p2, T p3, T p4, T p5) {
  return (p0 + p5) - 5 * (p1 + p4) + 20 * (p2 + p3);
}

// One output row: G copied, b from the centre row of b1, h from six G rows, j from six b1 rows.
void output_row_c(const uint8_t* const e[6], const int16_t* const t[6], int n, uint8_t* g, uint8_t* b, uint8_t* h,
                  uint8_t* j) {
  for (int c = 0; c < n; ++c) {
    g[c] = e[2][c];
    b[c] = clip_pixel((t[2][c] + 16) >> 5);
    h[c] = clip_pixel((tap6<int>(e[0][c], e[1][c], e[2][c], e[3][c], e[4][c], e[5][c]) + 16) >> 5);
    j[c] = clip_pixel((tap6<int>(t[0][c], t[1][c], t[2][c], t[3][c], t[4][c], t[5][c]) + 512) >> 10);
  }
}
// b1 at columns 0 .. n-1 from G columns -2 .. n+2 of the extended row (e points at its column -2).
void b1_row_c(const uint8_t* e, int n, int16_t* o) {
  for (int c = 0; c < n; ++c) o[c] = static_cast<int16_t>(tap6<int>(e[c], e[c + 1], e[c + 2], e[c + 3], e[c + 4], e[c + 5]));
}

#if defined(GME_X86_SIMD)
inline __m128i load8w(const uint8_t* p) {  // 8 bytes -> 8 x 16 bit
  return _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), _mm_setzero_si128());
}
inline __m128i load8s(const int16_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
// (p0 + p5) - 5 (p1 + p4) + 20 (p2 + p3) in 16 bits (sample inputs: -2550 .. 10710, no overflow).
inline __m128i tap16(__m128i p0, __m128i p1, __m128i p2, __m128i p3, __m128i p4, __m128i p5) {
  const __m128i s14 = _mm_add_epi16(p1, p4), s23 = _mm_add_epi16(p2, p3);
  const __m128i t = _mm_sub_epi16(_mm_slli_epi16(s23, 2), s14);  // 4 s23 - s14
  return _mm_add_epi16(_mm_add_epi16(p0, p5), _mm_add_epi16(_mm_slli_epi16(t, 2), t));
}
inline void store8(uint8_t* p, __m128i v16) {  // 8 x 16 bit, clipped to 0..255 -> 8 bytes
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(v16, v16));
}

void b1_row_sse2(const uint8_t* e, int n, int16_t* o) {
  int c = 0;
  for (; c + 8 <= n; c += 8) {
    const uint8_t* p = e + c;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + c),
                     tap16(load8w(p), load8w(p + 1), load8w(p + 2), load8w(p + 3), load8w(p + 4), load8w(p + 5)));
  }
  b1_row_c(e + c, n - c, o + c);
}

void output_row_sse2(const uint8_t* const e[6], const int16_t* const t[6], int n, uint8_t* g, uint8_t* b,
                     uint8_t* h, uint8_t* j) {
  const __m128i r16 = _mm_set1_epi16(16), r512 = _mm_set1_epi32(512);
  const __m128i k1 = _mm_set1_epi16(1), k5 = _mm_set1_epi16(-5), k20 = _mm_set1_epi16(20);
  int c = 0;
  for (; c + 8 <= n; c += 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(g + c), _mm_loadl_epi64(reinterpret_cast<const __m128i*>(e[2] + c)));
    store8(b + c, _mm_srai_epi16(_mm_add_epi16(load8s(t[2] + c), r16), 5));
    const __m128i hv = tap16(load8w(e[0] + c), load8w(e[1] + c), load8w(e[2] + c), load8w(e[3] + c),
                             load8w(e[4] + c), load8w(e[5] + c));
    store8(h + c, _mm_srai_epi16(_mm_add_epi16(hv, r16), 5));
    // j needs 32 bits: rows paired by their common tap, multiplied with pmaddwd.
    __m128i v[6];
    for (int k = 0; k < 6; ++k) v[k] = load8s(t[k] + c);
    auto half = [&](auto unpack) {
      __m128i s = _mm_madd_epi16(unpack(v[0], v[5]), k1);
      s = _mm_add_epi32(s, _mm_madd_epi16(unpack(v[1], v[4]), k5));
      s = _mm_add_epi32(s, _mm_madd_epi16(unpack(v[2], v[3]), k20));
      return _mm_srai_epi32(_mm_add_epi32(s, r512), 10);
    };
    const __m128i lo = half([](__m128i a, __m128i x) { return _mm_unpacklo_epi16(a, x); });
    const __m128i hi = half([](__m128i a, __m128i x) { return _mm_unpackhi_epi16(a, x); });
    store8(j + c, _mm_packs_epi32(lo, hi));
  }
  const uint8_t* e2[6];
  const int16_t* t2[6];
  for (int k = 0; k < 6; ++k) {
    e2[k] = e[k] + c;
    t2[k] = t[k] + c;
  }
  output_row_c(e2, t2, n - c, g + c, b + c, h + c, j + c);
}


// AVX2 (compiled for it by target attribute, installed only with kCpuAvx2): 16 columns per step, the SSE2 version
// for the rest; the same arithmetic in 16 lanes. The build's rows are ~2000 samples wide (1920x1080 and its
// 48-sample pads), so the step's width is what counts.
#define GME_AVX2 __attribute__((target("avx2")))

GME_AVX2 inline __m256i load16w(const uint8_t* p) {  // 16 bytes -> 16 x 16 bit
  return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
GME_AVX2 inline __m256i load16s(const int16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
GME_AVX2 inline __m256i tap16x16(__m256i p0, __m256i p1, __m256i p2, __m256i p3, __m256i p4, __m256i p5) {
  const __m256i s14 = _mm256_add_epi16(p1, p4), s23 = _mm256_add_epi16(p2, p3);
  const __m256i t = _mm256_sub_epi16(_mm256_slli_epi16(s23, 2), s14);  // 4 s23 - s14
  return _mm256_add_epi16(_mm256_add_epi16(p0, p5), _mm256_add_epi16(_mm256_slli_epi16(t, 2), t));
}
// The 16 words saturated to bytes. The two 128-bit halves are packed with one SSE2 packus rather than AVX2's, which
// packs within each half and would interleave them.
GME_AVX2 inline void store16(uint8_t* p, __m256i v16) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm_packus_epi16(_mm256_castsi256_si128(v16), _mm256_extracti128_si256(v16, 1)));
}

GME_AVX2 void b1_row_avx2(const uint8_t* e, int n, int16_t* o) {
  int c = 0;
  for (; c + 16 <= n; c += 16) {
    const uint8_t* p = e + c;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + c), tap16x16(load16w(p), load16w(p + 1), load16w(p + 2),
                                                                     load16w(p + 3), load16w(p + 4), load16w(p + 5)));
  }
  b1_row_sse2(e + c, n - c, o + c);
}

GME_AVX2 void output_row_avx2(const uint8_t* const e[6], const int16_t* const t[6], int n, uint8_t* g, uint8_t* b,
                              uint8_t* h, uint8_t* j) {
  const __m256i r16 = _mm256_set1_epi16(16), r512 = _mm256_set1_epi32(512);
  const __m256i k1 = _mm256_set1_epi16(1), k5 = _mm256_set1_epi16(-5), k20 = _mm256_set1_epi16(20);
  int c = 0;
  for (; c + 16 <= n; c += 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(g + c), _mm_loadu_si128(reinterpret_cast<const __m128i*>(e[2] + c)));
    store16(b + c, _mm256_srai_epi16(_mm256_add_epi16(load16s(t[2] + c), r16), 5));
    const __m256i hv = tap16x16(load16w(e[0] + c), load16w(e[1] + c), load16w(e[2] + c), load16w(e[3] + c),
                                load16w(e[4] + c), load16w(e[5] + c));
    store16(h + c, _mm256_srai_epi16(_mm256_add_epi16(hv, r16), 5));
    // j in 32 bits, rows paired by their common tap (pmaddwd). unpacklo/hi work within each 128-bit lane, and
    // packs_epi32 of the two halves puts every lane's columns back in order.
    __m256i v[6];
    for (int k = 0; k < 6; ++k) v[k] = load16s(t[k] + c);
    __m256i lo = _mm256_madd_epi16(_mm256_unpacklo_epi16(v[0], v[5]), k1);
    __m256i hi = _mm256_madd_epi16(_mm256_unpackhi_epi16(v[0], v[5]), k1);
    lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(v[1], v[4]), k5));
    hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(v[1], v[4]), k5));
    lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(v[2], v[3]), k20));
    hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(v[2], v[3]), k20));
    lo = _mm256_srai_epi32(_mm256_add_epi32(lo, r512), 10);
    hi = _mm256_srai_epi32(_mm256_add_epi32(hi, r512), 10);
    store16(j + c, _mm256_packs_epi32(lo, hi));
  }
  const uint8_t* e2[6];
  const int16_t* t2[6];
  for (int k = 0; k < 6; ++k) {
    e2[k] = e[k] + c;
    t2[k] = t[k] + c;
  }
  output_row_sse2(e2, t2, n - c, g + c, b + c, h + c, j + c);
}
#endif

void prepare(const Plane& luma, HalfpelPlanes* out) {
  static std::atomic<uint64_t> next_serial{1};
  out->serial = next_serial.fetch_add(1);
  const int W = luma.width, H = luma.height, P = kHalfpelPad;
  for (Plane* p : {&out->g, &out->b, &out->h, &out->j})
    if (p->width != W || p->height != H || p->pad != P) p->alloc(W, H, P);
}

// Output rows [y0, y1) of the planes (picture rows, -P <= y0 < y1 <= H + P).
void build_rows(const HalfpelFuncs& f, const Plane& luma, HalfpelPlanes* out, int y0, int y1,
                HalfpelScratch* scratch) {
  const int W = luma.width, H = luma.height, P = kHalfpelPad;
  // Picture rows y0-2 .. y1+2 of G (edge-replicated, columns -P-2 .. W+P+3) and of the unrounded horizontal
  // half-pel intermediate b1 (columns -P .. W+P-1): the vertical taps of h and j read 2 rows above and 3 below.
  const int ext_w = W + 2 * P + 6, rows = y1 - y0 + 5, out_w = W + 2 * P;
  HalfpelScratch local;
  std::vector<uint8_t>& gx = scratch ? scratch->gx : local.gx;
  std::vector<int16_t>& b1 = scratch ? scratch->b1 : local.b1;
  gx.resize(static_cast<size_t>(ext_w) * rows);
  b1.resize(static_cast<size_t>(out_w) * rows);
  for (int r = 0; r < rows; ++r) {
    const uint8_t* src = luma.row(clip3(0, H - 1, y0 - 2 + r));
    uint8_t* e = &gx[static_cast<size_t>(r) * ext_w];
    // Columns -P-2 .. W+P+3: the picture row in the middle, its edge samples replicated on both sides.
    std::memset(e, src[0], P + 2);
    std::memcpy(e + P + 2, src, W);
    std::memset(e + P + 2 + W, src[W - 1], ext_w - (P + 2 + W));
    f.b1_row(e, out_w, &b1[static_cast<size_t>(r) * out_w]);  // b1 at column c - P: e[c .. c + 5]
  }
  for (int y = y0; y < y1; ++y) {
    const int r = y - y0 + 2;  // buffer row of picture row y
    const uint8_t* e[6];
    const int16_t* t[6];
    for (int k = 0; k < 6; ++k) {
      e[k] = &gx[static_cast<size_t>(r - 2 + k) * ext_w + 2];  // column 0 = picture column -P
      t[k] = &b1[static_cast<size_t>(r - 2 + k) * out_w];
    }
    f.output_row(e, t, out_w, out->g.row(y) - P, out->b.row(y) - P, out->h.row(y) - P, out->j.row(y) - P);
  }
}

}  // namespace

void halfpel_init(uint32_t cpu, HalfpelFuncs& f) {
  f = {b1_row_c, output_row_c};
#if defined(GME_X86_SIMD)
  if (cpu & kCpuSse2) f = {b1_row_sse2, output_row_sse2};
  if (cpu & kCpuAvx2) f = {b1_row_avx2, output_row_avx2};
#else
  (void)cpu;
#endif
}

void build_halfpel_planes(const HalfpelFuncs& f, const Plane& luma, HalfpelPlanes* out, HalfpelScratch* scratch) {
  prepare(luma, out);
  build_rows(f, luma, out, -kHalfpelPad, luma.height + kHalfpelPad, scratch);
}

void prepare_halfpel_planes(const Plane& luma, HalfpelPlanes* out) { prepare(luma, out); }

void build_halfpel_plane_rows(const HalfpelFuncs& f, const Plane& luma, HalfpelPlanes* out, int y0, int y1,
                              HalfpelScratch* scratch) {
  build_rows(f, luma, out, y0, y1, scratch);
}

void build_halfpel_region(const HalfpelFuncs& f, const Plane& luma, int x, int y, int cols, int rows, int stride,
                          uint8_t* g, uint8_t* b, uint8_t* h, uint8_t* j) {
  // Rows -2 .. rows+2 of G (columns -2 .. cols+2, edge-replicated, 8 bytes of slack for the 8-wide loads) and b1.
  constexpr int kExtW = kHalfpelRegionMax + 5 + 8, kExtRows = kHalfpelRegionMax + 5;
  uint8_t ext[kExtRows][kExtW];
  int16_t b1[kExtRows][kHalfpelRegionMax + 8];
  for (int r = 0; r < rows + 5; ++r) {
    const uint8_t* src = luma.row(clip3(0, luma.height - 1, y - 2 + r));
    for (int c = 0; c < cols + 5; ++c) ext[r][c] = src[clip3(0, luma.width - 1, x - 2 + c)];
    f.b1_row(ext[r], cols, b1[r]);
  }
  for (int r = 0; r < rows; ++r) {
    const uint8_t* e[6];
    const int16_t* t[6];
    for (int k = 0; k < 6; ++k) {
      e[k] = ext[r + k] + 2;  // column 0 = region column 0
      t[k] = b1[r + k];
    }
    const int o = r * stride;
    f.output_row(e, t, cols, g + o, b + o, h + o, j + o);
  }
}

}  // namespace gme

#include "common/plane_ssd.h"

#include "common/cpu.h"

#if defined(GME_X86_SIMD)
#include <emmintrin.h>
#endif

namespace gme {

uint64_t plane_ssd_c(const uint8_t* a, int a_stride, const uint8_t* b, int b_stride, int w, int h) {
  uint64_t s = 0;
  for (int y = 0; y < h; ++y, a += a_stride, b += b_stride)
    for (int x = 0; x < w; ++x) {
      const int d = a[x] - b[x];
      s += static_cast<uint64_t>(d * d);
    }
  return s;
}

#if defined(GME_X86_SIMD)
namespace {
// 16 samples per step: differences in 16-bit lanes, squared and pairwise added by pmaddwd into 32-bit lanes. A
// row's partial sums stay below 2^32 for widths up to 66,000 (65025 per sample over 4 lanes x 2 products), and are
// added into the 64-bit total once per row; the last w % 16 samples are done one by one.
uint64_t plane_ssd_sse2(const uint8_t* a, int a_stride, const uint8_t* b, int b_stride, int w, int h) {
  const __m128i zero = _mm_setzero_si128();
  const int w16 = w & ~15;
  uint64_t total = 0;
  for (int y = 0; y < h; ++y, a += a_stride, b += b_stride) {
    __m128i acc = zero;
    for (int x = 0; x < w16; x += 16) {
      const __m128i va = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + x));
      const __m128i vb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + x));
      const __m128i dl = _mm_sub_epi16(_mm_unpacklo_epi8(va, zero), _mm_unpacklo_epi8(vb, zero));
      const __m128i dh = _mm_sub_epi16(_mm_unpackhi_epi8(va, zero), _mm_unpackhi_epi8(vb, zero));
      acc = _mm_add_epi32(acc, _mm_add_epi32(_mm_madd_epi16(dl, dl), _mm_madd_epi16(dh, dh)));
    }
    // Four unsigned 32-bit lanes into the 64-bit total.
    const __m128i lo = _mm_unpacklo_epi32(acc, zero), hi = _mm_unpackhi_epi32(acc, zero);
    const __m128i s2 = _mm_add_epi64(lo, hi);
    total += static_cast<uint64_t>(_mm_cvtsi128_si64(s2)) + static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(s2, s2)));
    for (int x = w16; x < w; ++x) {
      const int d = a[x] - b[x];
      total += static_cast<uint64_t>(d * d);
    }
  }
  return total;
}
}  // namespace
#endif

void plane_ssd_init(uint32_t cpu, PlaneSsdFn& f) {
  f = plane_ssd_c;
#if defined(GME_X86_SIMD)
  if (cpu & kCpuSse2) f = plane_ssd_sse2;
#else
  (void)cpu;
#endif
}

}  // namespace gme

#include "common/block4x4.h"

#include "common/cpu.h"
#include "common/pixel.h"

#if defined(GME_X86_SIMD)
#include <immintrin.h>

#include <cstring>

#include "common/hadamard_simd.h"
#endif

namespace gme {
namespace {

// The plain versions: the per-block primitives of pixel_ref(), one block at a time.
void satd_strip_c(const uint8_t* a, int as, const uint8_t* b, int bs, int n, uint16_t* out) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<uint16_t>(pixel_ref().satd[kB4x4](a + 4 * i, as, b + 4 * i, bs));
}
void sad_strip_c(const uint8_t* a, int as, const uint8_t* b, int bs, int n, uint16_t* out) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<uint16_t>(pixel_ref().sad[kB4x4](a + 4 * i, as, b + 4 * i, bs));
}

uint32_t masked_sum_c(const uint16_t d[16], uint16_t mask) {
  uint32_t sum = 0;
  for (int i = 0; i < 16; ++i)
    if (mask >> i & 1) sum += d[i];
  return sum;
}

#if defined(GME_X86_SIMD)
inline __m128i load4(const uint8_t* p) {
  int v;
  std::memcpy(&v, p, 4);  // exactly 4 bytes: a block may end at the last byte of its buffer
  return _mm_cvtsi32_si128(v);
}
inline __m128i load8(const uint8_t* p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); }
// Two 4x4 SATDs (common/hadamard_simd.h), results kept apart as 16-bit values.
inline void satd_pair(__m128i r0, __m128i r1, __m128i r2, __m128i r3, uint16_t* out, int n) {
  uint32_t x, y;
  hadamard_simd::satd_2x4x4_pair(r0, r1, r2, r3, &x, &y);
  out[0] = static_cast<uint16_t>(x);
  if (n > 1) out[1] = static_cast<uint16_t>(y);
}

inline __m128i diff8(const uint8_t* a, const uint8_t* b) {
  const __m128i z = _mm_setzero_si128();
  return _mm_sub_epi16(_mm_unpacklo_epi8(load8(a), z), _mm_unpacklo_epi8(load8(b), z));
}
inline __m128i diff4(const uint8_t* a, const uint8_t* b) {  // block B of the pair: zero differences
  const __m128i z = _mm_setzero_si128();
  return _mm_sub_epi16(_mm_unpacklo_epi8(load4(a), z), _mm_unpacklo_epi8(load4(b), z));
}

void satd_strip_sse2(const uint8_t* a, int as, const uint8_t* b, int bs, int n, uint16_t* out) {
  if (n == 1) {
    satd_pair(diff4(a, b), diff4(a + as, b + bs), diff4(a + 2 * as, b + 2 * bs), diff4(a + 3 * as, b + 3 * bs), out,
              1);
    return;
  }
  for (int i = 0; i < n; i += 2, a += 8, b += 8, out += 2)
    satd_pair(diff8(a, b), diff8(a + as, b + bs), diff8(a + 2 * as, b + 2 * bs), diff8(a + 3 * as, b + 3 * bs), out,
              2);
}

void sad_strip_sse2(const uint8_t* a, int as, const uint8_t* b, int bs, int n, uint16_t* out) {
  for (int i = 0; i < n; ++i, a += 4, b += 4) {
    auto rows = [](const uint8_t* p, int s) {
      return _mm_unpacklo_epi64(_mm_unpacklo_epi32(load4(p), load4(p + s)),
                                _mm_unpacklo_epi32(load4(p + 2 * s), load4(p + 3 * s)));
    };
    const __m128i v = _mm_sad_epu8(rows(a, as), rows(b, bs));
    out[i] = static_cast<uint16_t>(_mm_cvtsi128_si32(_mm_add_epi32(v, _mm_srli_si128(v, 8))));
  }
}

// The values under the mask summed by pmaddwd (16 values of at most 8160: signed 16-bit inputs, 32-bit sum).
uint32_t masked_sum_sse2(const uint16_t d[16], uint16_t mask) {
  const __m128i bits = _mm_set_epi16(128, 64, 32, 16, 8, 4, 2, 1);
  const __m128i lo = _mm_cmpeq_epi16(_mm_and_si128(_mm_set1_epi16(static_cast<int16_t>(mask & 0xFF)), bits), bits);
  const __m128i hi = _mm_cmpeq_epi16(_mm_and_si128(_mm_set1_epi16(static_cast<int16_t>(mask >> 8)), bits), bits);
  const __m128i ones = _mm_set1_epi16(1);
  __m128i s = _mm_add_epi32(
      _mm_madd_epi16(_mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d)), lo), ones),
      _mm_madd_epi16(_mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d + 8)), hi), ones));
  s = _mm_add_epi32(s, _mm_srli_si128(s, 8));
  s = _mm_add_epi32(s, _mm_srli_si128(s, 4));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(s));
}

// AVX2 (compiled for it by target attribute, installed only with kCpuAvx2): the four blocks of a 16-wide
// strip in one pass, one block per 64-bit quarter of the rows as in pixel_simd_avx2.cpp's satd_4x4x4, with the
// per-block sums kept apart. Narrower strips keep the SSE2 path.
#define GME_B4_AVX2 __attribute__((target("avx2")))
GME_B4_AVX2 inline __m256i diff16(const uint8_t* a, const uint8_t* b) {
  return _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a))),
                          _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b))));
}
GME_B4_AVX2 void satd_strip_avx2(const uint8_t* a, int as, const uint8_t* b, int bs, int n, uint16_t* out) {
  if (n != 4) {
    satd_strip_sse2(a, as, b, bs, n, out);
    return;
  }
  const __m256i s32 = hadamard_simd::satd_4x4x4_blocks(diff16(a, b), diff16(a + as, b + bs),
                                                       diff16(a + 2 * as, b + 2 * bs), diff16(a + 3 * as, b + 3 * bs));
  // Blocks 0, 1 in the low half, 2, 3 in the high half -> [b0, b1, b2, b3] as 16-bit values.
  const __m128i t = _mm_unpacklo_epi64(_mm256_castsi256_si128(s32), _mm256_extracti128_si256(s32, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_packs_epi32(t, t));
}
#endif

}  // namespace

void block4x4_init(uint32_t cpu, Block4x4Funcs& f) {
  f = {satd_strip_c, sad_strip_c, masked_sum_c};
#if defined(GME_X86_SIMD)
  if (cpu & kCpuSse2) f = {satd_strip_sse2, sad_strip_sse2, masked_sum_sse2};
  if (cpu & kCpuAvx2) f.satd = satd_strip_avx2;
#else
  (void)cpu;
#endif
}

}  // namespace gme

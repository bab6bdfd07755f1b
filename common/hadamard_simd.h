// Internal to the x86 SIMD files (common/pixel_simd_*.cpp, common/block4x4.cpp): the 4x4 Hadamard SATD butterflies,
// written once. JM's per-4x4 rounding ((sum |coefficients| + 1) >> 1) is applied per block.
#pragma once
#include "common/cpu.h"
#if defined(GME_X86_SIMD)
#include <immintrin.h>

#include <cstdint>

namespace gme {
namespace hadamard_simd {

inline __m128i abs16(__m128i v) { return _mm_max_epi16(v, _mm_sub_epi16(_mm_setzero_si128(), v)); }

// Two 4x4 SATDs at once. r0..r3: rows of 16-bit differences, lanes 0-3 block A, lanes 4-7 block B.
inline void satd_2x4x4_pair(__m128i r0, __m128i r1, __m128i r2, __m128i r3, uint32_t* sa, uint32_t* sb) {
  // Vertical butterflies (across rows, both blocks at once).
  __m128i s01 = _mm_add_epi16(r0, r1), d01 = _mm_sub_epi16(r0, r1);
  __m128i s23 = _mm_add_epi16(r2, r3), d23 = _mm_sub_epi16(r2, r3);
  __m128i m0 = _mm_add_epi16(s01, s23), m1 = _mm_sub_epi16(s01, s23);
  __m128i m2 = _mm_sub_epi16(d01, d23), m3 = _mm_add_epi16(d01, d23);
  // Transpose each 4x4 half so the columns become vectors: c_k = [A col k | B col k].
  __m128i u0 = _mm_unpacklo_epi16(m0, m1), u1 = _mm_unpacklo_epi16(m2, m3);
  __m128i u2 = _mm_unpackhi_epi16(m0, m1), u3 = _mm_unpackhi_epi16(m2, m3);
  __m128i v0 = _mm_unpacklo_epi32(u0, u1), v1 = _mm_unpackhi_epi32(u0, u1);
  __m128i v2 = _mm_unpacklo_epi32(u2, u3), v3 = _mm_unpackhi_epi32(u2, u3);
  __m128i c0 = _mm_unpacklo_epi64(v0, v2), c1 = _mm_unpackhi_epi64(v0, v2);
  __m128i c2 = _mm_unpacklo_epi64(v1, v3), c3 = _mm_unpackhi_epi64(v1, v3);
  // Horizontal butterflies; |coefficients| <= 16 * 255, a sum of four fits in 16 bits.
  s01 = _mm_add_epi16(c0, c1); d01 = _mm_sub_epi16(c0, c1);
  s23 = _mm_add_epi16(c2, c3); d23 = _mm_sub_epi16(c2, c3);
  __m128i sum = _mm_add_epi16(_mm_add_epi16(abs16(_mm_add_epi16(s01, s23)), abs16(_mm_sub_epi16(s01, s23))),
                              _mm_add_epi16(abs16(_mm_sub_epi16(d01, d23)), abs16(_mm_add_epi16(d01, d23))));
  __m128i s32 = _mm_madd_epi16(sum, _mm_set1_epi16(1));  // [A01, A23, B01, B23]
  s32 = _mm_add_epi32(s32, _mm_srli_si128(s32, 4));      // lane 0: A, lane 2: B
  const uint32_t a = static_cast<uint32_t>(_mm_cvtsi128_si32(s32));
  const uint32_t b = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(s32, 8)));
  *sa = (a + 1) >> 1;
  *sb = (b + 1) >> 1;
}

// Four 4x4 SATDs at once (AVX2; callers check the CPU): rows r0..r3 of 16 differences, blocks in lanes 0-3, 4-7,
// 8-11, 12-15. Returns the rounded SATDs per 128-bit half as [X, Y, X, Y] (low half: blocks 0, 1; high: 2, 3).
__attribute__((target("avx2"))) inline __m256i satd_4x4x4_blocks(__m256i r0, __m256i r1, __m256i r2, __m256i r3) {
  __m256i s01 = _mm256_add_epi16(r0, r1), d01 = _mm256_sub_epi16(r0, r1);
  __m256i s23 = _mm256_add_epi16(r2, r3), d23 = _mm256_sub_epi16(r2, r3);
  __m256i m0 = _mm256_add_epi16(s01, s23), m1 = _mm256_sub_epi16(s01, s23);
  __m256i m2 = _mm256_sub_epi16(d01, d23), m3 = _mm256_add_epi16(d01, d23);
  __m256i u0 = _mm256_unpacklo_epi16(m0, m1), u1 = _mm256_unpacklo_epi16(m2, m3);
  __m256i u2 = _mm256_unpackhi_epi16(m0, m1), u3 = _mm256_unpackhi_epi16(m2, m3);
  __m256i v0 = _mm256_unpacklo_epi32(u0, u1), v1 = _mm256_unpackhi_epi32(u0, u1);
  __m256i v2 = _mm256_unpacklo_epi32(u2, u3), v3 = _mm256_unpackhi_epi32(u2, u3);
  __m256i c0 = _mm256_unpacklo_epi64(v0, v2), c1 = _mm256_unpackhi_epi64(v0, v2);
  __m256i c2 = _mm256_unpacklo_epi64(v1, v3), c3 = _mm256_unpackhi_epi64(v1, v3);
  s01 = _mm256_add_epi16(c0, c1); d01 = _mm256_sub_epi16(c0, c1);
  s23 = _mm256_add_epi16(c2, c3); d23 = _mm256_sub_epi16(c2, c3);
  __m256i sum = _mm256_add_epi16(
      _mm256_add_epi16(_mm256_abs_epi16(_mm256_add_epi16(s01, s23)), _mm256_abs_epi16(_mm256_sub_epi16(s01, s23))),
      _mm256_add_epi16(_mm256_abs_epi16(_mm256_sub_epi16(d01, d23)), _mm256_abs_epi16(_mm256_add_epi16(d01, d23))));
  __m256i s32 = _mm256_madd_epi16(sum, _mm256_set1_epi16(1));  // per half: [X01, X23, Y01, Y23]
  s32 = _mm256_hadd_epi32(s32, s32);                            // per half: [X, Y, X, Y]
  return _mm256_srli_epi32(_mm256_add_epi32(s32, _mm256_set1_epi32(1)), 1);  // JM's per-4x4 rounding
}

}  // namespace hadamard_simd
}  // namespace gme
#endif

// AVX2 versions of the pixel primitives. Only these functions are compiled for AVX2 (target attribute), so the
// program still runs on CPUs without it; pixel_init() installs them when the CPU flags include kCpuAvx2.
// Routines without an AVX2 gain (8- and 4-wide SADs) keep their SSE2 versions.
#include "common/pixel_simd_impl.h"
#include "common/hadamard_simd.h"

#if defined(GME_X86_SIMD)
#include <immintrin.h>

#include <cstring>

#define GME_AVX2 __attribute__((target("avx2")))

namespace gme {
namespace {

GME_AVX2 inline __m256i load16x2(const uint8_t* p, int stride) {  // two 16-byte rows, one per 128-bit lane
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
                                 _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + stride)), 1);
}
GME_AVX2 inline __m256i widen16(const uint8_t* p) {  // 16 bytes -> 16 x 16 bit
  return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
GME_AVX2 inline __m128i load8(const uint8_t* p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); }
GME_AVX2 inline __m256i widen8x2(const uint8_t* p, int stride) {  // two 8-byte rows -> 16 x 16 bit
  return _mm256_cvtepu8_epi16(_mm_unpacklo_epi64(load8(p), load8(p + stride)));
}

template <int H>
GME_AVX2 uint32_t sad16_avx2(const uint8_t* a, int as, const uint8_t* b, int bs) {
  __m256i acc = _mm256_setzero_si256();
  for (int y = 0; y < H; y += 2, a += 2 * as, b += 2 * bs)
    acc = _mm256_add_epi64(acc, _mm256_sad_epu8(load16x2(a, as), load16x2(b, bs)));
  __m128i s = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_add_epi64(s, _mm_srli_si128(s, 8))));
}

template <int W, int H>
GME_AVX2 uint64_t ssd_avx2(const uint8_t* a, int as, const uint8_t* b, int bs) {
  __m256i acc = _mm256_setzero_si256();
  if (W == 16) {
    for (int y = 0; y < H; ++y, a += as, b += bs) {
      __m256i d = _mm256_sub_epi16(widen16(a), widen16(b));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(d, d));
    }
  } else {
    for (int y = 0; y < H; y += 2, a += 2 * as, b += 2 * bs) {
      __m256i d = _mm256_sub_epi16(widen8x2(a, as), widen8x2(b, bs));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(d, d));
    }
  }
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  s = _mm_add_epi32(s, _mm_srli_si128(s, 8));
  s = _mm_add_epi32(s, _mm_srli_si128(s, 4));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(s));
}

// Four 4x4 Hadamard SATDs at once: rows r0..r3 of 16 differences (16-bit), blocks in lanes 0-3, 4-7, 8-11,
// 12-15. Same butterflies and transpose as the SSE2 version, in both 128-bit halves.
GME_AVX2 inline uint32_t satd_4x4x4(__m256i r0, __m256i r1, __m256i r2, __m256i r3) {
  const __m256i s32 = hadamard_simd::satd_4x4x4_blocks(r0, r1, r2, r3);  // per half: [X, Y, X, Y]
  __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s32), _mm256_extracti128_si256(s32, 1));
  t = _mm_add_epi32(t, _mm_srli_si128(t, 4));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(t));
}

// 8-wide blocks: two rows of 8 side by side would mix rows, so the halves hold rows y..y+3 of the left 4x4s
// pair (lanes 0-7: two blocks) of 4-row groups g and g + 1.
GME_AVX2 inline __m256i diff8x2rows(const uint8_t* a, int as4, const uint8_t* b, int bs4) {
  return _mm256_sub_epi16(widen8x2(a, as4), widen8x2(b, bs4));
}

template <int W, int H>
GME_AVX2 uint32_t satd_avx2(const uint8_t* a, int as, const uint8_t* b, int bs) {
  uint32_t s = 0;
  if (W == 16) {
    for (int y = 0; y < H; y += 4, a += 4 * as, b += 4 * bs)
      s += satd_4x4x4(_mm256_sub_epi16(widen16(a), widen16(b)), _mm256_sub_epi16(widen16(a + as), widen16(b + bs)),
                      _mm256_sub_epi16(widen16(a + 2 * as), widen16(b + 2 * bs)),
                      _mm256_sub_epi16(widen16(a + 3 * as), widen16(b + 3 * bs)));
  } else {  // W == 8, H multiple of 8: lower half 4-row group y, upper half group y + 4
    for (int y = 0; y < H; y += 8, a += 8 * as, b += 8 * bs)
      s += satd_4x4x4(diff8x2rows(a, 4 * as, b, 4 * bs), diff8x2rows(a + as, 4 * as, b + bs, 4 * bs),
                      diff8x2rows(a + 2 * as, 4 * as, b + 2 * bs, 4 * bs),
                      diff8x2rows(a + 3 * as, 4 * as, b + 3 * bs, 4 * bs));
  }
  return s;
}

// Sixteen 4x4 SADs: rows r and r + 2 of a 4-row group share a register (one per 128-bit half); interleaving the
// 4-byte pieces of rows r and r + 1 puts one block's bytes in each 8-byte quarter, so psadbw of the interleaved
// current and reference registers yields per-block sums directly.
GME_AVX2 void sad_4x4_x16_avx2(const uint8_t* cur, int cs, const uint8_t* ref, int rs, uint32_t out[16]) {
  for (int g = 0; g < 4; ++g, cur += 4 * cs, ref += 4 * rs) {
    const __m256i a02 = load16x2(cur, 2 * cs), b02 = load16x2(ref, 2 * rs);
    const __m256i a13 = load16x2(cur + cs, 2 * cs), b13 = load16x2(ref + rs, 2 * rs);
    // Per half: lo = [blk0, blk1] of rows (r, r + 1), hi = [blk2, blk3]; the halves are rows 0-1 and 2-3.
    const __m256i lo = _mm256_sad_epu8(_mm256_unpacklo_epi32(a02, a13), _mm256_unpacklo_epi32(b02, b13));
    const __m256i hi = _mm256_sad_epu8(_mm256_unpackhi_epi32(a02, a13), _mm256_unpackhi_epi32(b02, b13));
    // 64-bit lanes lo = [b0, b1 | b0', b1'], hi = [b2, b3 | b2', b3'] -> 32-bit [b0, b2, b1, b3] per half.
    const __m256i packed = _mm256_or_si256(lo, _mm256_slli_epi64(hi, 32));
    const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(packed), _mm256_extracti128_si256(packed, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * g), _mm_shuffle_epi32(s, 0xD8));  // -> [b0 b1 b2 b3]
  }
}

}  // namespace

void pixel_fill_avx2(PixelFuncs& f) {
  f.sad[kB16x16] = sad16_avx2<16>;
  f.sad[kB16x8] = sad16_avx2<8>;
  f.satd[kB16x16] = satd_avx2<16, 16>;
  f.satd[kB16x8] = satd_avx2<16, 8>;
  f.satd[kB8x16] = satd_avx2<8, 16>;
  f.satd[kB8x8] = satd_avx2<8, 8>;
  f.ssd[kB16x16] = ssd_avx2<16, 16>;
  f.ssd[kB16x8] = ssd_avx2<16, 8>;
  f.ssd[kB8x16] = ssd_avx2<8, 16>;
  f.ssd[kB8x8] = ssd_avx2<8, 8>;
  f.ssd[kB8x4] = ssd_avx2<8, 4>;
  f.sad_4x4_x16 = sad_4x4_x16_avx2;
}

}  // namespace gme
#endif

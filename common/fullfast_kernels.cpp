#include "common/fullfast_kernels.h"

#include <algorithm>

#include "common/cpu.h"

#if defined(GME_X86_SIMD)
#include <immintrin.h>
#endif

namespace gme {
namespace {

// Rows are visited from the centre outwards (the minimum is usually near the predictor), so the running minimum
// drops early and fewer positions are collected; the visiting order does not affect the result.
inline int row_at(int k, int width) {
  const int c = width / 2;
  return (k & 1) ? c - (k + 1) / 2 : c + k / 2;
}

// Macroblock-raster index of sub-block i (raster inside the 8x8) of 8x8 block b8.
constexpr int raster_of(int b8, int i) { return (2 * (b8 & 1) + (i & 1)) + 4 * (2 * (b8 >> 1) + (i >> 1)); }

// The partition sums of one position (or one vector of positions): T is int or a SIMD wrapper with add().
template <typename T, typename Add, typename Store>
inline void partitions_from_blocks(const T blk[16], Add add, Store store) {
  T b8sum[4];
  for (int b8 = 0; b8 < 4; ++b8) {
    const T s0 = blk[raster_of(b8, 0)], s1 = blk[raster_of(b8, 1)];
    const T s2 = blk[raster_of(b8, 2)], s3 = blk[raster_of(b8, 3)];
    store(25 + 4 * b8 + 0, s0);
    store(25 + 4 * b8 + 1, s1);
    store(25 + 4 * b8 + 2, s2);
    store(25 + 4 * b8 + 3, s3);
    const T top = add(s0, s1), bottom = add(s2, s3);
    store(9 + 2 * b8, top);
    store(10 + 2 * b8, bottom);
    store(17 + 2 * b8, add(s0, s2));
    store(18 + 2 * b8, add(s1, s3));
    b8sum[b8] = add(top, bottom);
    store(5 + b8, b8sum[b8]);
  }
  const T t16 = add(b8sum[0], b8sum[1]), b16 = add(b8sum[2], b8sum[3]);
  store(1, t16);
  store(2, b16);
  store(3, add(b8sum[0], b8sum[2]));
  store(4, add(b8sum[1], b8sum[3]));
  store(0, add(t16, b16));
}

void row_partitions_c(const uint32_t* raw, uint16_t* const dst[41], int count) {
  for (int k = 0; k < count; ++k) {
    int blk[16];
    for (int b = 0; b < 16; ++b) blk[b] = static_cast<int>(raw[16 * k + b]);
    partitions_from_blocks(
        blk, [](int a, int b) { return std::min(0xFFFF, a + b); },
        [&](int part, int v) { dst[part][k] = static_cast<uint16_t>(v); });
  }
}

uint32_t screen_c(const uint16_t* sad, int width, int stride, const uint16_t* hx, const uint16_t* hy, int* cand,
                  int* ncand) {
  int cur_min = 0xFFFF, n = 0;
  uint16_t q[512];
  for (int k = 0; k < width; ++k) {
    const int r = row_at(k, width);
    if (hy[r] > cur_min + 1) continue;  // every q of this row exceeds the minimum found + 1
    const uint16_t* row = sad + r * stride;
    int row_min = 0xFFFF;
    for (int c = 0; c < width; ++c) {
      q[c] = static_cast<uint16_t>(std::min(0xFFFF, row[c] + hx[c] + hy[r]));
      row_min = std::min<int>(row_min, q[c]);
    }
    cur_min = std::min(cur_min, row_min);
    if (cur_min >= 0xFFFE) continue;  // the caller falls back to the exact scan
    for (int c = 0; c < width; ++c)
      if (q[c] <= cur_min + 1) cand[n++] = (r << 16) | c;
  }
  *ncand = n;
  return static_cast<uint32_t>(cur_min);
}

#if defined(GME_X86_SIMD)
// 8x8 transpose of 16-bit elements.
inline void transpose8x8_epi16(__m128i r[8]) {
  __m128i t0 = _mm_unpacklo_epi16(r[0], r[1]), t1 = _mm_unpackhi_epi16(r[0], r[1]);
  __m128i t2 = _mm_unpacklo_epi16(r[2], r[3]), t3 = _mm_unpackhi_epi16(r[2], r[3]);
  __m128i t4 = _mm_unpacklo_epi16(r[4], r[5]), t5 = _mm_unpackhi_epi16(r[4], r[5]);
  __m128i t6 = _mm_unpacklo_epi16(r[6], r[7]), t7 = _mm_unpackhi_epi16(r[6], r[7]);
  __m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);
  __m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);
  __m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);
  __m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);
  r[0] = _mm_unpacklo_epi64(u0, u4); r[1] = _mm_unpackhi_epi64(u0, u4);
  r[2] = _mm_unpacklo_epi64(u1, u5); r[3] = _mm_unpackhi_epi64(u1, u5);
  r[4] = _mm_unpacklo_epi64(u2, u6); r[5] = _mm_unpackhi_epi64(u2, u6);
  r[6] = _mm_unpacklo_epi64(u3, u7); r[7] = _mm_unpackhi_epi64(u3, u7);
}

// Eight positions at a time: pack each position's 16 u32 into two vectors of 8 u16 (values < 0x8000, so the
// signed saturation of packs is exact), two 8x8 transposes give 16 block vectors over 8 positions, and the
// larger partitions are summed in registers.
void row_partitions_sse2(const uint32_t* raw, uint16_t* const dst[41], int count) {
  for (int k0 = 0; k0 < count; k0 += 8) {
    __m128i lo[8], hi[8];
    for (int k = 0; k < 8; ++k) {
      const __m128i* p = reinterpret_cast<const __m128i*>(raw + 16 * (k0 + k));
      lo[k] = _mm_packs_epi32(_mm_loadu_si128(p), _mm_loadu_si128(p + 1));
      hi[k] = _mm_packs_epi32(_mm_loadu_si128(p + 2), _mm_loadu_si128(p + 3));
    }
    transpose8x8_epi16(lo);
    transpose8x8_epi16(hi);
    __m128i blk[16];
    for (int b = 0; b < 8; ++b) {
      blk[b] = lo[b];
      blk[b + 8] = hi[b];
    }
    partitions_from_blocks(
        blk, [](__m128i a, __m128i b) { return _mm_adds_epu16(a, b); },
        [&](int part, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(dst[part] + k0), v); });
  }
}

inline __m128i min_epu16_sse2(__m128i a, __m128i b) { return _mm_sub_epi16(a, _mm_subs_epu16(a, b)); }

uint32_t screen_sse2(const uint16_t* sad, int width, int stride, const uint16_t* hx, const uint16_t* hy, int* cand,
                     int* ncand) {
  int cur_min = 0xFFFF, n = 0;
  alignas(16) uint16_t qbuf[512];
  for (int k = 0; k < width; ++k) {
    const int r = row_at(k, width);
    if (hy[r] > cur_min + 1) continue;
    const uint16_t* row = sad + r * stride;
    const __m128i vy = _mm_set1_epi16(static_cast<int16_t>(hy[r]));
    __m128i vmin = _mm_set1_epi16(-1);
    for (int c = 0; c < stride; c += 8) {
      __m128i q = _mm_adds_epu16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + c)),
                                 _mm_loadu_si128(reinterpret_cast<const __m128i*>(hx + c)));
      q = _mm_adds_epu16(q, vy);
      _mm_store_si128(reinterpret_cast<__m128i*>(qbuf + c), q);
      vmin = min_epu16_sse2(vmin, q);
    }
    vmin = min_epu16_sse2(vmin, _mm_srli_si128(vmin, 8));
    vmin = min_epu16_sse2(vmin, _mm_srli_si128(vmin, 4));
    vmin = min_epu16_sse2(vmin, _mm_srli_si128(vmin, 2));
    cur_min = std::min(cur_min, _mm_extract_epi16(vmin, 0));
    if (cur_min >= 0xFFFE) continue;  // the caller falls back to the exact scan
    const __m128i thr = _mm_set1_epi16(static_cast<int16_t>(cur_min + 1));
    for (int c = 0; c < stride; c += 8) {
      const __m128i q = _mm_load_si128(reinterpret_cast<const __m128i*>(qbuf + c));
      int mask = _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_subs_epu16(q, thr), _mm_setzero_si128()));
      while (mask) {
        const int lane = __builtin_ctz(mask) >> 1;
        mask &= mask - 1;
        mask &= mask - 1;  // two bits per 16-bit lane
        cand[n++] = (r << 16) | (c + lane);
      }
    }
  }
  *ncand = n;
  return static_cast<uint32_t>(cur_min);
}

#define GME_AVX2 __attribute__((target("avx2")))

// 8x8 transposes of 16-bit elements in both 128-bit halves at once.
GME_AVX2 inline void transpose8x8x2_epi16(__m256i r[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
  }
  u[0] = _mm256_unpacklo_epi32(t[0], t[2]); u[1] = _mm256_unpackhi_epi32(t[0], t[2]);
  u[2] = _mm256_unpacklo_epi32(t[1], t[3]); u[3] = _mm256_unpackhi_epi32(t[1], t[3]);
  u[4] = _mm256_unpacklo_epi32(t[4], t[6]); u[5] = _mm256_unpackhi_epi32(t[4], t[6]);
  u[6] = _mm256_unpacklo_epi32(t[5], t[7]); u[7] = _mm256_unpackhi_epi32(t[5], t[7]);
  r[0] = _mm256_unpacklo_epi64(u[0], u[4]); r[1] = _mm256_unpackhi_epi64(u[0], u[4]);
  r[2] = _mm256_unpacklo_epi64(u[1], u[5]); r[3] = _mm256_unpackhi_epi64(u[1], u[5]);
  r[4] = _mm256_unpacklo_epi64(u[2], u[6]); r[5] = _mm256_unpackhi_epi64(u[2], u[6]);
  r[6] = _mm256_unpacklo_epi64(u[3], u[7]); r[7] = _mm256_unpackhi_epi64(u[3], u[7]);
}

// Sixteen positions at a time. packs of a position's two 8-block halves gives, per 128-bit half, blocks
// {0-3, 8-11} (low) and {4-7, 12-15} (high); transposing positions 0-7 and 8-15 separately and joining the
// matching halves gives each block over 16 positions.
GME_AVX2 void row_partitions_avx2(const uint32_t* raw, uint16_t* const dst[41], int count) {
  static constexpr int kLow[8] = {0, 1, 2, 3, 8, 9, 10, 11}, kHigh[8] = {4, 5, 6, 7, 12, 13, 14, 15};
  for (int k0 = 0; k0 < count; k0 += 16) {
    __m256i a[8], b[8];
    for (int k = 0; k < 8; ++k) {
      const __m256i* p = reinterpret_cast<const __m256i*>(raw + 16 * (k0 + k));
      const __m256i* q = reinterpret_cast<const __m256i*>(raw + 16 * (k0 + 8 + k));
      a[k] = _mm256_packs_epi32(_mm256_loadu_si256(p), _mm256_loadu_si256(p + 1));
      b[k] = _mm256_packs_epi32(_mm256_loadu_si256(q), _mm256_loadu_si256(q + 1));
    }
    transpose8x8x2_epi16(a);
    transpose8x8x2_epi16(b);
    __m256i blk[16];
    for (int j = 0; j < 8; ++j) {
      blk[kLow[j]] = _mm256_permute2x128_si256(a[j], b[j], 0x20);
      blk[kHigh[j]] = _mm256_permute2x128_si256(a[j], b[j], 0x31);
    }
    // partitions_from_blocks() spelled out: a generic lambda would not inherit the avx2 target.
    auto st = [&](int part, __m256i v) GME_AVX2 { _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst[part] + k0), v); };
    __m256i b8sum[4];
    for (int b8 = 0; b8 < 4; ++b8) {
      const __m256i s0 = blk[raster_of(b8, 0)], s1 = blk[raster_of(b8, 1)];
      const __m256i s2 = blk[raster_of(b8, 2)], s3 = blk[raster_of(b8, 3)];
      st(25 + 4 * b8, s0);
      st(26 + 4 * b8, s1);
      st(27 + 4 * b8, s2);
      st(28 + 4 * b8, s3);
      const __m256i top = _mm256_adds_epu16(s0, s1), bottom = _mm256_adds_epu16(s2, s3);
      st(9 + 2 * b8, top);
      st(10 + 2 * b8, bottom);
      st(17 + 2 * b8, _mm256_adds_epu16(s0, s2));
      st(18 + 2 * b8, _mm256_adds_epu16(s1, s3));
      b8sum[b8] = _mm256_adds_epu16(top, bottom);
      st(5 + b8, b8sum[b8]);
    }
    const __m256i t16 = _mm256_adds_epu16(b8sum[0], b8sum[1]), b16 = _mm256_adds_epu16(b8sum[2], b8sum[3]);
    st(1, t16);
    st(2, b16);
    st(3, _mm256_adds_epu16(b8sum[0], b8sum[2]));
    st(4, _mm256_adds_epu16(b8sum[1], b8sum[3]));
    st(0, _mm256_adds_epu16(t16, b16));
  }
}

GME_AVX2 uint32_t screen_avx2(const uint16_t* sad, int width, int stride, const uint16_t* hx, const uint16_t* hy,
                              int* cand, int* ncand) {
  int cur_min = 0xFFFF, n = 0;
  alignas(32) uint16_t qbuf[512];
  for (int k = 0; k < width; ++k) {
    const int r = row_at(k, width);
    if (hy[r] > cur_min + 1) continue;
    const uint16_t* row = sad + r * stride;
    const __m256i vy = _mm256_set1_epi16(static_cast<int16_t>(hy[r]));
    __m256i vmin = _mm256_set1_epi16(-1);
    for (int c = 0; c < stride; c += 16) {
      __m256i q = _mm256_adds_epu16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + c)),
                                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hx + c)));
      q = _mm256_adds_epu16(q, vy);
      _mm256_store_si256(reinterpret_cast<__m256i*>(qbuf + c), q);
      vmin = _mm256_min_epu16(vmin, q);
    }
    __m128i m = _mm_min_epu16(_mm256_castsi256_si128(vmin), _mm256_extracti128_si256(vmin, 1));
    m = _mm_minpos_epu16(m);  // SSE4.1, implied by AVX2
    cur_min = std::min(cur_min, _mm_extract_epi16(m, 0));
    if (cur_min >= 0xFFFE) continue;
    const __m256i thr = _mm256_set1_epi16(static_cast<int16_t>(cur_min + 1));
    for (int c = 0; c < stride; c += 16) {
      const __m256i q = _mm256_load_si256(reinterpret_cast<const __m256i*>(qbuf + c));
      unsigned mask = static_cast<unsigned>(
          _mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_subs_epu16(q, thr), _mm256_setzero_si256())));
      while (mask) {
        const int lane = __builtin_ctz(mask) >> 1;
        mask &= mask - 1;
        mask &= mask - 1;
        cand[n++] = (r << 16) | (c + lane);
      }
    }
  }
  *ncand = n;
  return static_cast<uint32_t>(cur_min);
}
#endif

}  // namespace

void fullfast_kernels_init(uint32_t cpu, FullFastKernels& f) {
  f = {row_partitions_c, screen_c};
#if defined(GME_X86_SIMD)
  if (cpu & kCpuSse2) f = {row_partitions_sse2, screen_sse2};
  if (cpu & kCpuAvx2) f = {row_partitions_avx2, screen_avx2};
#else
  (void)cpu;
#endif
}

}  // namespace gme

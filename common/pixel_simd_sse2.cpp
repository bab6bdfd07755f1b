// SSE2 versions of the pixel primitives; pixel_init() installs them when the CPU flags include kCpuSse2.
#include "common/pixel_simd_impl.h"
#include "common/hadamard_simd.h"

#if defined(GME_X86_SIMD)
#include <emmintrin.h>

#include <cstring>

namespace gme {
namespace {

inline __m128i load16(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline __m128i load8(const uint8_t* p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); }
inline __m128i load4(const uint8_t* p) {
  int v;
  std::memcpy(&v, p, 4);  // exactly 4 bytes: a 4-wide block may end at the last byte of its buffer
  return _mm_cvtsi32_si128(v);
}
// Two 8-byte rows in one register.
inline __m128i load8x2(const uint8_t* p, int stride) { return _mm_unpacklo_epi64(load8(p), load8(p + stride)); }
// Four 4-byte rows in one register.
inline __m128i load4x4(const uint8_t* p, int stride) {
  __m128i r01 = _mm_unpacklo_epi32(load4(p), load4(p + stride));
  __m128i r23 = _mm_unpacklo_epi32(load4(p + 2 * stride), load4(p + 3 * stride));
  return _mm_unpacklo_epi64(r01, r23);
}
inline uint32_t hsum64(__m128i v) {  // sum of the two 64-bit lanes (psadbw results)
  return static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_add_epi32(v, _mm_srli_si128(v, 8))));
}
inline uint32_t hsum32(__m128i v) {
  v = _mm_add_epi32(v, _mm_srli_si128(v, 8));
  v = _mm_add_epi32(v, _mm_srli_si128(v, 4));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(v));
}

template <int H>
uint32_t sad16_sse2(const uint8_t* a, int as, const uint8_t* b, int bs) {
  __m128i acc = _mm_setzero_si128();
  for (int y = 0; y < H; ++y, a += as, b += bs) acc = _mm_add_epi64(acc, _mm_sad_epu8(load16(a), load16(b)));
  return hsum64(acc);
}
template <int H>
uint32_t sad8_sse2(const uint8_t* a, int as, const uint8_t* b, int bs) {
  __m128i acc = _mm_setzero_si128();
  for (int y = 0; y < H; y += 2, a += 2 * as, b += 2 * bs)
    acc = _mm_add_epi64(acc, _mm_sad_epu8(load8x2(a, as), load8x2(b, bs)));
  return hsum64(acc);
}
template <int H>
uint32_t sad4_sse2(const uint8_t* a, int as, const uint8_t* b, int bs) {
  __m128i acc = _mm_setzero_si128();
  for (int y = 0; y < H; y += 4, a += 4 * as, b += 4 * bs)
    acc = _mm_add_epi64(acc, _mm_sad_epu8(load4x4(a, as), load4x4(b, bs)));
  return hsum64(acc);
}

// Sum of squared differences of 16 bytes held as two 8x16-bit halves.
inline __m128i ssd_acc(__m128i acc, __m128i a, __m128i b) {
  const __m128i z = _mm_setzero_si128();
  __m128i dl = _mm_sub_epi16(_mm_unpacklo_epi8(a, z), _mm_unpacklo_epi8(b, z));
  __m128i dh = _mm_sub_epi16(_mm_unpackhi_epi8(a, z), _mm_unpackhi_epi8(b, z));
  return _mm_add_epi32(acc, _mm_add_epi32(_mm_madd_epi16(dl, dl), _mm_madd_epi16(dh, dh)));
}
template <int W, int H>
uint64_t ssd_sse2(const uint8_t* a, int as, const uint8_t* b, int bs) {
  __m128i acc = _mm_setzero_si128();  // 16x16 at most 256 * 255^2 < 2^31 per lane
  if (W == 16) {
    for (int y = 0; y < H; ++y, a += as, b += bs) acc = ssd_acc(acc, load16(a), load16(b));
  } else if (W == 8) {
    for (int y = 0; y < H; y += 2, a += 2 * as, b += 2 * bs) acc = ssd_acc(acc, load8x2(a, as), load8x2(b, bs));
  } else {
    for (int y = 0; y < H; y += 4, a += 4 * as, b += 4 * bs) acc = ssd_acc(acc, load4x4(a, as), load4x4(b, bs));
  }
  return hsum32(acc);
}

using hadamard_simd::abs16;
using hadamard_simd::satd_2x4x4_pair;

inline uint32_t satd_2x4x4(__m128i r0, __m128i r1, __m128i r2, __m128i r3) {
  uint32_t a, b;
  satd_2x4x4_pair(r0, r1, r2, r3, &a, &b);
  return a + b;
}
inline __m128i diff8(const uint8_t* a, const uint8_t* b) {
  const __m128i z = _mm_setzero_si128();
  return _mm_sub_epi16(_mm_unpacklo_epi8(load8(a), z), _mm_unpacklo_epi8(load8(b), z));
}
// 4-wide rows i and i + 4 side by side: the two 4x4 blocks of a 4x8 column.
inline __m128i diff4x2(const uint8_t* a, int as, const uint8_t* b, int bs) {
  const __m128i z = _mm_setzero_si128();
  __m128i va = _mm_unpacklo_epi32(load4(a), load4(a + 4 * as));
  __m128i vb = _mm_unpacklo_epi32(load4(b), load4(b + 4 * bs));
  return _mm_sub_epi16(_mm_unpacklo_epi8(va, z), _mm_unpacklo_epi8(vb, z));
}

template <int W, int H>
uint32_t satd_sse2(const uint8_t* a, int as, const uint8_t* b, int bs) {
  uint32_t s = 0;
  if (W == 4) {
    if (H == 8) {
      s = satd_2x4x4(diff4x2(a, as, b, bs), diff4x2(a + as, as, b + bs, bs), diff4x2(a + 2 * as, as, b + 2 * bs, bs),
                     diff4x2(a + 3 * as, as, b + 3 * bs, bs));
    } else {
      // Block B is all zero differences: it adds (0 + 1) >> 1 = 0.
      const __m128i z = _mm_setzero_si128();
      auto d = [&](int y) {
        return _mm_sub_epi16(_mm_unpacklo_epi8(load4(a + y * as), z), _mm_unpacklo_epi8(load4(b + y * bs), z));
      };
      s = satd_2x4x4(d(0), d(1), d(2), d(3));
    }
    return s;
  }
  for (int y = 0; y < H; y += 4)
    for (int x = 0; x < W; x += 8) {
      const uint8_t* pa = a + y * as + x;
      const uint8_t* pb = b + y * bs + x;
      s += satd_2x4x4(diff8(pa, pb), diff8(pa + as, pb + bs), diff8(pa + 2 * as, pb + 2 * bs),
                      diff8(pa + 3 * as, pb + 3 * bs));
    }
  return s;
}

// Sixteen 4x4 SADs. Interleaving the 4-byte pieces of two rows puts one block's bytes in each 8-byte half, so
// psadbw of the interleaved current and reference rows yields per-block sums directly.
void sad_4x4_x16_sse2(const uint8_t* cur, int cs, const uint8_t* ref, int rs, uint32_t out[16]) {
  for (int g = 0; g < 4; ++g, cur += 4 * cs, ref += 4 * rs) {
    const __m128i a0 = load16(cur), a1 = load16(cur + cs), a2 = load16(cur + 2 * cs), a3 = load16(cur + 3 * cs);
    const __m128i b0 = load16(ref), b1 = load16(ref + rs), b2 = load16(ref + 2 * rs), b3 = load16(ref + 3 * rs);
    // unpacklo: [r0 blk0, r1 blk0, r0 blk1, r1 blk1] -> psadbw lanes: blocks 0 and 1; unpackhi: blocks 2 and 3.
    const __m128i s01 = _mm_add_epi64(_mm_sad_epu8(_mm_unpacklo_epi32(a0, a1), _mm_unpacklo_epi32(b0, b1)),
                                      _mm_sad_epu8(_mm_unpacklo_epi32(a2, a3), _mm_unpacklo_epi32(b2, b3)));
    const __m128i s23 = _mm_add_epi64(_mm_sad_epu8(_mm_unpackhi_epi32(a0, a1), _mm_unpackhi_epi32(b0, b1)),
                                      _mm_sad_epu8(_mm_unpackhi_epi32(a2, a3), _mm_unpackhi_epi32(b2, b3)));
    // 64-bit lanes [b0, b1] and [b2, b3] -> four 32-bit values.
    const __m128i packed = _mm_unpacklo_epi64(_mm_shuffle_epi32(s01, 0x08), _mm_shuffle_epi32(s23, 0x08));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * g), packed);
  }
}

// satd_4x4_xn: two predictions per satd_2x4x4_pair, the source rows loaded once and duplicated into both halves.
void satd_4x4_xn_sse2(const uint8_t* src, int ss, const uint8_t* preds, int n, uint32_t* out) {
  const __m128i z = _mm_setzero_si128();
  const __m128i s4 = load4x4(src, ss);                          // source rows 0..3, 4 bytes each
  const __m128i s01 = _mm_unpacklo_epi32(s4, s4), s23 = _mm_unpackhi_epi32(s4, s4);  // [r0 r0 r1 r1], [r2 r2 r3 r3]
  const __m128i sr0 = _mm_unpacklo_epi8(s01, z), sr1 = _mm_unpackhi_epi8(s01, z);
  const __m128i sr2 = _mm_unpacklo_epi8(s23, z), sr3 = _mm_unpackhi_epi8(s23, z);
  int i = 0;
  for (; i + 1 < n; i += 2) {
    const __m128i p = load16(preds + 16 * i), q = load16(preds + 16 * i + 16);
    const __m128i pq01 = _mm_unpacklo_epi32(p, q), pq23 = _mm_unpackhi_epi32(p, q);  // [p0 q0 p1 q1], [p2 q2 p3 q3]
    satd_2x4x4_pair(_mm_sub_epi16(sr0, _mm_unpacklo_epi8(pq01, z)), _mm_sub_epi16(sr1, _mm_unpackhi_epi8(pq01, z)),
                    _mm_sub_epi16(sr2, _mm_unpacklo_epi8(pq23, z)), _mm_sub_epi16(sr3, _mm_unpackhi_epi8(pq23, z)),
                    &out[i], &out[i + 1]);
  }
  if (i < n) {  // odd count: the last prediction in both halves
    const __m128i p = load16(preds + 16 * i);
    const __m128i pp01 = _mm_unpacklo_epi32(p, p), pp23 = _mm_unpackhi_epi32(p, p);
    uint32_t dup;
    satd_2x4x4_pair(_mm_sub_epi16(sr0, _mm_unpacklo_epi8(pp01, z)), _mm_sub_epi16(sr1, _mm_unpackhi_epi8(pp01, z)),
                    _mm_sub_epi16(sr2, _mm_unpacklo_epi8(pp23, z)), _mm_sub_epi16(sr3, _mm_unpackhi_epi8(pp23, z)),
                    &out[i], &dup);
  }
}

// hadamard_ac_16x16: two horizontally adjacent 4x4 blocks per step, with satd_2x4x4's butterflies. Every
// coefficient of the 2-D Hadamard is the same integer whichever pass goes first, so halving the raw outputs
// (arithmetic shift) gives JM's values; |raw| <= 16 * 255 fits 16 bits. The DC of each block is lane 0 / lane 4
// of the all-plus output; it is summed with the rest and subtracted again.
uint32_t hadamard_ac_16x16_sse2(const uint8_t* a, int as, const uint8_t* b, int bs, int dc[16], uint32_t budget) {
  __m128i acc = _mm_setzero_si128();
  int dc_abs = 0;
  for (int by = 0; by < 4; ++by) {
    if (by > 0 && budget != UINT32_MAX) {  // a row of four blocks done: over budget already?
      const uint32_t ac = hsum32(acc) - static_cast<uint32_t>(dc_abs);
      if (ac >= budget) return ac;
    }
    for (int half = 0; half < 2; ++half) {
      const uint8_t* pa = a + 4 * by * as + 8 * half;
      const uint8_t* pb = b + 4 * by * bs + 8 * half;
      const __m128i r0 = diff8(pa, pb), r1 = diff8(pa + as, pb + bs);
      const __m128i r2 = diff8(pa + 2 * as, pb + 2 * bs), r3 = diff8(pa + 3 * as, pb + 3 * bs);
      __m128i s01 = _mm_add_epi16(r0, r1), d01 = _mm_sub_epi16(r0, r1);
      __m128i s23 = _mm_add_epi16(r2, r3), d23 = _mm_sub_epi16(r2, r3);
      const __m128i m0 = _mm_add_epi16(s01, s23), m1 = _mm_sub_epi16(s01, s23);
      const __m128i m2 = _mm_sub_epi16(d01, d23), m3 = _mm_add_epi16(d01, d23);
      const __m128i u0 = _mm_unpacklo_epi16(m0, m1), u1 = _mm_unpacklo_epi16(m2, m3);
      const __m128i u2 = _mm_unpackhi_epi16(m0, m1), u3 = _mm_unpackhi_epi16(m2, m3);
      const __m128i v0 = _mm_unpacklo_epi32(u0, u1), v1 = _mm_unpackhi_epi32(u0, u1);
      const __m128i v2 = _mm_unpacklo_epi32(u2, u3), v3 = _mm_unpackhi_epi32(u2, u3);
      const __m128i c0 = _mm_unpacklo_epi64(v0, v2), c1 = _mm_unpackhi_epi64(v0, v2);
      const __m128i c2 = _mm_unpacklo_epi64(v1, v3), c3 = _mm_unpackhi_epi64(v1, v3);
      s01 = _mm_add_epi16(c0, c1); d01 = _mm_sub_epi16(c0, c1);
      s23 = _mm_add_epi16(c2, c3); d23 = _mm_sub_epi16(c2, c3);
      const __m128i o0 = _mm_srai_epi16(_mm_add_epi16(s01, s23), 1);
      const __m128i o1 = _mm_srai_epi16(_mm_sub_epi16(s01, s23), 1);
      const __m128i o2 = _mm_srai_epi16(_mm_sub_epi16(d01, d23), 1);
      const __m128i o3 = _mm_srai_epi16(_mm_add_epi16(d01, d23), 1);
      const __m128i sum = _mm_add_epi16(_mm_add_epi16(abs16(o0), abs16(o1)), _mm_add_epi16(abs16(o2), abs16(o3)));
      acc = _mm_add_epi32(acc, _mm_madd_epi16(sum, _mm_set1_epi16(1)));
      const int da = static_cast<int16_t>(_mm_extract_epi16(o0, 0));
      const int db = static_cast<int16_t>(_mm_extract_epi16(o0, 4));
      dc[4 * by + 2 * half] = da;
      dc[4 * by + 2 * half + 1] = db;
      dc_abs += (da < 0 ? -da : da) + (db < 0 ? -db : db);
    }
  }
  return hsum32(acc) - static_cast<uint32_t>(dc_abs);
}

}  // namespace

void pixel_fill_sse2(PixelFuncs& f) {
  f.sad[kB16x16] = sad16_sse2<16>;
  f.sad[kB16x8] = sad16_sse2<8>;
  f.sad[kB8x16] = sad8_sse2<16>;
  f.sad[kB8x8] = sad8_sse2<8>;
  f.sad[kB8x4] = sad8_sse2<4>;
  f.sad[kB4x8] = sad4_sse2<8>;
  f.sad[kB4x4] = sad4_sse2<4>;
  f.satd[kB16x16] = satd_sse2<16, 16>;
  f.satd[kB16x8] = satd_sse2<16, 8>;
  f.satd[kB8x16] = satd_sse2<8, 16>;
  f.satd[kB8x8] = satd_sse2<8, 8>;
  f.satd[kB8x4] = satd_sse2<8, 4>;
  f.satd[kB4x8] = satd_sse2<4, 8>;
  f.satd[kB4x4] = satd_sse2<4, 4>;
  f.ssd[kB16x16] = ssd_sse2<16, 16>;
  f.ssd[kB16x8] = ssd_sse2<16, 8>;
  f.ssd[kB8x16] = ssd_sse2<8, 16>;
  f.ssd[kB8x8] = ssd_sse2<8, 8>;
  f.ssd[kB8x4] = ssd_sse2<8, 4>;
  f.ssd[kB4x8] = ssd_sse2<4, 8>;
  f.ssd[kB4x4] = ssd_sse2<4, 4>;
  f.sad_4x4_x16 = sad_4x4_x16_sse2;
  f.hadamard_ac_16x16 = hadamard_ac_16x16_sse2;
  f.satd_4x4_xn = satd_4x4_xn_sse2;
}

}  // namespace gme
#endif

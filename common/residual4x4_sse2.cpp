// SSE2 residual4x4 (see residual4x4.h). The forward transform runs in 16 bits (|coefficient| <= 6 * 6 * 255 =
// 9180 for 8-bit samples), the quantisation products |c| * quant_coef in 32 bits from mullo/mulhi_epu16, so every
// step is exact. The inverse runs in 32 bits like the reference (dequantised values reach 2063 * 29 << 8).
#include "common/residual4x4_simd.h"

#if defined(GME_X86_SIMD)
#include <emmintrin.h>

#include <cstring>

#include "common/quant.h"
#include "common/transform.h"

namespace gme {
namespace {

// Scale factors by raster position: JM quant_coef per qp % 6, and the dequantisation factor v << (qp / 6) per qp
// (at most 29 << 8: fits 16 bits, so level * factor is one 16 x 16 -> 32-bit multiply).
struct Tables {
  alignas(16) int16_t quant[6][16];
  alignas(16) int16_t dequant[52][16];
  Tables() {
    for (int i = 0; i < 16; ++i) {
      for (int r = 0; r < 6; ++r) quant[r][i] = static_cast<int16_t>(quant_scale(r, i));
      for (int qp = 0; qp < 52; ++qp) dequant[qp][i] = static_cast<int16_t>(dequant_scale(qp % 6, i) << (qp / 6));
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}

inline __m128i load4(const uint8_t* p) {
  int v;
  std::memcpy(&v, p, 4);  // exactly 4 bytes: a block may end at the last byte of its buffer
  return _mm_cvtsi32_si128(v);
}
inline __m128i widen4(const uint8_t* p) { return _mm_unpacklo_epi8(load4(p), _mm_setzero_si128()); }
inline __m128i load_a(const int16_t* p) { return _mm_load_si128(reinterpret_cast<const __m128i*>(p)); }

// 4x4 transpose of 16-bit values held in the low halves of r0..r3; results in the low halves.
inline void transpose16(__m128i& r0, __m128i& r1, __m128i& r2, __m128i& r3) {
  const __m128i t0 = _mm_unpacklo_epi16(r0, r1), t1 = _mm_unpacklo_epi16(r2, r3);
  const __m128i c01 = _mm_unpacklo_epi32(t0, t1), c23 = _mm_unpackhi_epi32(t0, t1);
  r0 = c01;
  r1 = _mm_unpackhi_epi64(c01, c01);
  r2 = c23;
  r3 = _mm_unpackhi_epi64(c23, c23);
}
// 4x4 transpose of 32-bit values.
inline void transpose32(__m128i& r0, __m128i& r1, __m128i& r2, __m128i& r3) {
  const __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpacklo_epi32(r2, r3);
  const __m128i t2 = _mm_unpackhi_epi32(r0, r1), t3 = _mm_unpackhi_epi32(r2, r3);
  r0 = _mm_unpacklo_epi64(t0, t1);
  r1 = _mm_unpackhi_epi64(t0, t1);
  r2 = _mm_unpacklo_epi64(t2, t3);
  r3 = _mm_unpackhi_epi64(t2, t3);
}

// fdct4x4's butterflies on four vectors (one per input index, lanes = the other dimension).
inline void fdct_pass(__m128i& a0, __m128i& a1, __m128i& a2, __m128i& a3) {
  const __m128i s03 = _mm_add_epi16(a0, a3), d03 = _mm_sub_epi16(a0, a3);
  const __m128i s12 = _mm_add_epi16(a1, a2), d12 = _mm_sub_epi16(a1, a2);
  a0 = _mm_add_epi16(s03, s12);
  a1 = _mm_add_epi16(_mm_add_epi16(d03, d03), d12);
  a2 = _mm_sub_epi16(s03, s12);
  a3 = _mm_sub_epi16(d03, _mm_add_epi16(d12, d12));
}

// JM quantisation of eight coefficients: sign(c) * min((|c| * q + f) >> qbits, kMaxLevel).
inline __m128i quant8(__m128i c, __m128i q, __m128i f, __m128i shift) {
  const __m128i sign = _mm_srai_epi16(c, 15);
  const __m128i a = _mm_sub_epi16(_mm_xor_si128(c, sign), sign);
  const __m128i lo = _mm_mullo_epi16(a, q), hi = _mm_mulhi_epu16(a, q);
  const __m128i p0 = _mm_srl_epi32(_mm_add_epi32(_mm_unpacklo_epi16(lo, hi), f), shift);
  const __m128i p1 = _mm_srl_epi32(_mm_add_epi32(_mm_unpackhi_epi16(lo, hi), f), shift);
  // packs saturates at 32767, above kMaxLevel, so the clamp is unchanged.
  const __m128i l = _mm_min_epi16(_mm_packs_epi32(p0, p1), _mm_set1_epi16(kMaxLevel));
  return _mm_sub_epi16(_mm_xor_si128(l, sign), sign);
}

int fwd_sse2(const uint8_t* src, int ss, const uint8_t* pred, int ps, int qp, int offset, int first,
             int levels_zz[16], int* dc) {
  __m128i r0 = _mm_sub_epi16(widen4(src), widen4(pred));
  __m128i r1 = _mm_sub_epi16(widen4(src + ss), widen4(pred + ps));
  __m128i r2 = _mm_sub_epi16(widen4(src + 2 * ss), widen4(pred + 2 * ps));
  __m128i r3 = _mm_sub_epi16(widen4(src + 3 * ss), widen4(pred + 3 * ps));
  transpose16(r0, r1, r2, r3);  // columns
  fdct_pass(r0, r1, r2, r3);    // the row transform: r_k[y] = t[4y + k]
  transpose16(r0, r1, r2, r3);  // rows of t
  fdct_pass(r0, r1, r2, r3);    // the column transform: r_k[x] = coef[4k + x]
  const __m128i c0 = _mm_unpacklo_epi64(r0, r1), c1 = _mm_unpacklo_epi64(r2, r3);  // raster 0-7, 8-15

  const int qbits = 15 + qp / 6;
  const __m128i f = _mm_set1_epi32(offset << (qbits - 11)), shift = _mm_cvtsi32_si128(qbits);
  const int16_t* q = tables().quant[qp % 6];
  const __m128i l0 = quant8(c0, load_a(q), f, shift), l1 = quant8(c1, load_a(q + 8), f, shift);
  const __m128i z = _mm_setzero_si128();
  unsigned nzmask = ~static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(_mm_cmpeq_epi16(l0, z),
                                                                           _mm_cmpeq_epi16(l1, z)))) & 0xFFFFu;
  if (nzmask == 0) {  // no level at all (most inter blocks at QP 28-40): no zig-zag gather
    for (int k = 0; k < 16; k += 4) _mm_storeu_si128(reinterpret_cast<__m128i*>(levels_zz + k), z);
  } else {
    alignas(16) int16_t lv[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(lv), l0);
    _mm_store_si128(reinterpret_cast<__m128i*>(lv + 8), l1);
    for (int k = 0; k < 16; ++k) levels_zz[k] = lv[kZigzag4x4[k]];
  }
  if (first) {
    levels_zz[0] = 0;  // zig-zag position 0 is raster 0
    nzmask &= ~1u;
    *dc = static_cast<int16_t>(_mm_extract_epi16(c0, 0));
  }
  // Bit count of a 16-bit mask in registers (without -mpopcnt, __builtin_popcount is a libgcc call per block).
  nzmask = nzmask - ((nzmask >> 1) & 0x5555u);
  nzmask = (nzmask & 0x3333u) + ((nzmask >> 2) & 0x3333u);
  nzmask = (nzmask + (nzmask >> 4)) & 0x0F0Fu;
  return static_cast<int>((nzmask + (nzmask >> 8)) & 0x1Fu);
}

// idct4x4's butterflies (8.5.12.2) on four 32-bit vectors.
inline void idct_pass(__m128i& a0, __m128i& a1, __m128i& a2, __m128i& a3) {
  const __m128i e0 = _mm_add_epi32(a0, a2), e1 = _mm_sub_epi32(a0, a2);
  const __m128i e2 = _mm_sub_epi32(_mm_srai_epi32(a1, 1), a3), e3 = _mm_add_epi32(a1, _mm_srai_epi32(a3, 1));
  a0 = _mm_add_epi32(e0, e3);
  a1 = _mm_add_epi32(e1, e2);
  a2 = _mm_sub_epi32(e1, e2);
  a3 = _mm_sub_epi32(e0, e3);
}

void inv_sse2(const int levels_zz[16], int qp, int first, const int* dc, const uint8_t* pred, int ps, uint8_t* dst,
              int ds) {
  alignas(16) int16_t lv[16];
  for (int k = 0; k < 16; ++k) lv[kZigzag4x4[k]] = static_cast<int16_t>(k < first ? 0 : levels_zz[k]);
  const int16_t* s = tables().dequant[qp];
  const __m128i a = _mm_load_si128(reinterpret_cast<const __m128i*>(lv)), sa = load_a(s);
  const __m128i b = _mm_load_si128(reinterpret_cast<const __m128i*>(lv + 8)), sb = load_a(s + 8);
  const __m128i alo = _mm_mullo_epi16(a, sa), ahi = _mm_mulhi_epi16(a, sa);
  const __m128i blo = _mm_mullo_epi16(b, sb), bhi = _mm_mulhi_epi16(b, sb);
  __m128i d0 = _mm_unpacklo_epi16(alo, ahi), d1 = _mm_unpackhi_epi16(alo, ahi);  // rows 0, 1
  __m128i d2 = _mm_unpacklo_epi16(blo, bhi), d3 = _mm_unpackhi_epi16(blo, bhi);  // rows 2, 3
  if (dc) d0 = _mm_or_si128(_mm_and_si128(d0, _mm_set_epi32(-1, -1, -1, 0)), _mm_cvtsi32_si128(*dc));
  transpose32(d0, d1, d2, d3);  // columns
  idct_pass(d0, d1, d2, d3);    // rows first, as the standard: d_k[y] = f[4y + k]
  transpose32(d0, d1, d2, d3);
  idct_pass(d0, d1, d2, d3);    // columns: d_k[x] = residual row k before rounding
  const __m128i r32 = _mm_set1_epi32(32), z = _mm_setzero_si128();
  __m128i out[4] = {d0, d1, d2, d3};
  for (int y = 0; y < 4; ++y)
    out[y] = _mm_add_epi32(_mm_srai_epi32(_mm_add_epi32(out[y], r32), 6),
                           _mm_unpacklo_epi16(widen4(pred + y * ps), z));
  // Signed saturation to 16 bits then unsigned to 8 bits clips exactly like clip_pixel.
  const __m128i px = _mm_packus_epi16(_mm_packs_epi32(out[0], out[1]), _mm_packs_epi32(out[2], out[3]));
  alignas(16) uint8_t bytes[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(bytes), px);
  for (int y = 0; y < 4; ++y) std::memcpy(dst + y * ds, bytes + 4 * y, 4);
}

}  // namespace

void residual4x4_fill_sse2(Residual4x4Funcs& f) {
  f.fwd = fwd_sse2;
  f.inv = inv_sse2;
}

}  // namespace gme
#endif

// SSE2 luma edge filter (8.7.2.3 / 8.7.2.4) for deblock.cpp: all 16 lines of a macroblock edge at once, in 16-bit
// lanes (8 lines per register, every intermediate below 2^11), the same arithmetic as luma_line in deblock.cpp.
// A horizontal edge's lines are columns, so its rows p3..q3 load directly; a vertical edge's 16 rows of 8 samples
// are transposed into the same form and back. Its twin is deblock_luma_edge_c (tests/test_checkasm.cpp).
#include "common/deblock_simd.h"

#if defined(GME_X86_SIMD)
#include <emmintrin.h>

#include <cstring>

namespace gme {
namespace {

inline __m128i absd(__m128i a, __m128i b) { return _mm_max_epi16(_mm_sub_epi16(a, b), _mm_sub_epi16(b, a)); }
inline __m128i select(__m128i m, __m128i a, __m128i b) { return _mm_or_si128(_mm_and_si128(m, a), _mm_andnot_si128(m, b)); }

// Eight lines in 16-bit lanes: v[0..7] = p3, p2, p1, p0, q0, q1, q2, q3 (filtered in place). tc0: per line;
// enable: 0xFFFF on lines whose segment has bS > 0.
void filter8(__m128i v[8], bool strong, __m128i tc0, __m128i enable, __m128i alpha, __m128i beta) {
  const __m128i p3 = v[0], p2 = v[1], p1 = v[2], p0 = v[3], q0 = v[4], q1 = v[5], q2 = v[6], q3 = v[7];
  const __m128i filt = _mm_and_si128(
      _mm_and_si128(_mm_cmplt_epi16(absd(p0, q0), alpha), _mm_cmplt_epi16(absd(p1, p0), beta)),
      _mm_and_si128(_mm_cmplt_epi16(absd(q1, q0), beta), enable));
  const __m128i ap = _mm_and_si128(_mm_cmplt_epi16(absd(p2, p0), beta), filt);
  const __m128i aq = _mm_and_si128(_mm_cmplt_epi16(absd(q2, q0), beta), filt);
  const __m128i two = _mm_set1_epi16(2), four = _mm_set1_epi16(4);
  if (!strong) {
    const __m128i tc = _mm_sub_epi16(_mm_sub_epi16(tc0, ap), aq);  // tc0 + ap + aq (masks are -1)
    __m128i delta = _mm_add_epi16(_mm_slli_epi16(_mm_sub_epi16(q0, p0), 2), _mm_sub_epi16(p1, q1));
    delta = _mm_srai_epi16(_mm_add_epi16(delta, four), 3);
    delta = _mm_max_epi16(_mm_sub_epi16(_mm_setzero_si128(), tc), _mm_min_epi16(tc, delta));
    v[3] = select(filt, _mm_add_epi16(p0, delta), p0);  // clipped to [0, 255] when packed
    v[4] = select(filt, _mm_sub_epi16(q0, delta), q0);
    const __m128i avg = _mm_srai_epi16(_mm_add_epi16(_mm_add_epi16(p0, q0), _mm_set1_epi16(1)), 1);
    const __m128i ntc0 = _mm_sub_epi16(_mm_setzero_si128(), tc0);
    const __m128i dp = _mm_srai_epi16(_mm_sub_epi16(_mm_add_epi16(p2, avg), _mm_slli_epi16(p1, 1)), 1);
    const __m128i dq = _mm_srai_epi16(_mm_sub_epi16(_mm_add_epi16(q2, avg), _mm_slli_epi16(q1, 1)), 1);
    v[2] = select(ap, _mm_add_epi16(p1, _mm_max_epi16(ntc0, _mm_min_epi16(tc0, dp))), p1);
    v[5] = select(aq, _mm_add_epi16(q1, _mm_max_epi16(ntc0, _mm_min_epi16(tc0, dq))), q1);
    return;
  }
  // bS = 4: the strong filter where that side is smooth and the step small, else the 3-tap one.
  const __m128i small_gap = _mm_cmplt_epi16(absd(p0, q0), _mm_add_epi16(_mm_srai_epi16(alpha, 2), two));
  const __m128i sp = _mm_and_si128(ap, small_gap), sq = _mm_and_si128(aq, small_gap);
  // One side of the edge (8-7.2.4, the equations are symmetric): x3..x0 on this side, y0, y1 across it; writes
  // the side's x0, x1, x2.
  auto side = [&](__m128i x3, __m128i x2, __m128i x1, __m128i x0, __m128i y0, __m128i y1, __m128i smooth,
                  __m128i* o0, __m128i* o1, __m128i* o2) {
    const __m128i x0y0 = _mm_add_epi16(x0, y0);
    const __m128i s0 = _mm_srai_epi16(
        _mm_add_epi16(_mm_add_epi16(x2, _mm_slli_epi16(_mm_add_epi16(x1, x0y0), 1)), _mm_add_epi16(y1, four)), 3);
    const __m128i s1 = _mm_srai_epi16(_mm_add_epi16(_mm_add_epi16(x2, x1), _mm_add_epi16(x0y0, two)), 2);
    const __m128i s2 = _mm_srai_epi16(
        _mm_add_epi16(_mm_add_epi16(_mm_slli_epi16(x3, 1), _mm_add_epi16(_mm_slli_epi16(x2, 1), x2)),
                      _mm_add_epi16(_mm_add_epi16(x1, x0y0), four)), 3);
    const __m128i w0 = _mm_srai_epi16(_mm_add_epi16(_mm_add_epi16(_mm_slli_epi16(x1, 1), x0), _mm_add_epi16(y1, two)), 2);
    *o0 = select(filt, select(smooth, s0, w0), x0);
    *o1 = select(smooth, s1, x1);
    *o2 = select(smooth, s2, x2);
  };
  side(p3, p2, p1, p0, q0, q1, sp, &v[3], &v[2], &v[1]);
  side(q3, q2, q1, q0, p0, p1, sq, &v[4], &v[5], &v[6]);
}

// 16 lines: u8 vectors p3..q3 (one byte per line), split into two halves of 8 lines for filter8.
void filter16(__m128i r[8], bool strong, const uint8_t bs[4], const uint8_t tc0[4], int alpha, int beta) {
  const __m128i zero = _mm_setzero_si128();
  alignas(16) uint8_t tc_line[16], en_line[16];
  for (int l = 0; l < 16; ++l) {
    tc_line[l] = tc0[l >> 2];
    en_line[l] = bs[l >> 2] ? 0xFF : 0;
  }
  const __m128i tcv = _mm_load_si128(reinterpret_cast<const __m128i*>(tc_line));
  const __m128i env = _mm_load_si128(reinterpret_cast<const __m128i*>(en_line));
  const __m128i a = _mm_set1_epi16(static_cast<int16_t>(alpha)), b = _mm_set1_epi16(static_cast<int16_t>(beta));
  __m128i lo[8], hi[8];
  for (int k = 0; k < 8; ++k) {
    lo[k] = _mm_unpacklo_epi8(r[k], zero);
    hi[k] = _mm_unpackhi_epi8(r[k], zero);
  }
  filter8(lo, strong, _mm_unpacklo_epi8(tcv, zero), _mm_unpacklo_epi8(env, env), a, b);
  filter8(hi, strong, _mm_unpackhi_epi8(tcv, zero), _mm_unpackhi_epi8(env, env), a, b);
  for (int k = 1; k < 7; ++k) r[k] = _mm_packus_epi16(lo[k], hi[k]);
}

// 16 rows of 8 bytes (row i at p + i * stride) <-> 8 vectors of 16 bytes (vector c = column c of every row).
void load_transposed(const uint8_t* p, int stride, __m128i c[8]) {
  __m128i a[8];
  for (int i = 0; i < 8; ++i)
    a[i] = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + (2 * i) * stride)),
                             _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + (2 * i + 1) * stride)));
  __m128i b[8];
  for (int i = 0; i < 4; ++i) {
    b[2 * i] = _mm_unpacklo_epi16(a[2 * i], a[2 * i + 1]);      // rows 4i..4i+3, columns 0-3
    b[2 * i + 1] = _mm_unpackhi_epi16(a[2 * i], a[2 * i + 1]);  // columns 4-7
  }
  // rows 0-7 and rows 8-15, columns in pairs
  const __m128i c01a = _mm_unpacklo_epi32(b[0], b[2]), c23a = _mm_unpackhi_epi32(b[0], b[2]);
  const __m128i c45a = _mm_unpacklo_epi32(b[1], b[3]), c67a = _mm_unpackhi_epi32(b[1], b[3]);
  const __m128i c01b = _mm_unpacklo_epi32(b[4], b[6]), c23b = _mm_unpackhi_epi32(b[4], b[6]);
  const __m128i c45b = _mm_unpacklo_epi32(b[5], b[7]), c67b = _mm_unpackhi_epi32(b[5], b[7]);
  c[0] = _mm_unpacklo_epi64(c01a, c01b);
  c[1] = _mm_unpackhi_epi64(c01a, c01b);
  c[2] = _mm_unpacklo_epi64(c23a, c23b);
  c[3] = _mm_unpackhi_epi64(c23a, c23b);
  c[4] = _mm_unpacklo_epi64(c45a, c45b);
  c[5] = _mm_unpackhi_epi64(c45a, c45b);
  c[6] = _mm_unpacklo_epi64(c67a, c67b);
  c[7] = _mm_unpackhi_epi64(c67a, c67b);
}

void store_transposed(uint8_t* p, int stride, const __m128i c[8]) {
  __m128i lo[4], hi[4];  // column pairs (2k, 2k+1) interleaved: rows 0-7 and rows 8-15
  for (int k = 0; k < 4; ++k) {
    lo[k] = _mm_unpacklo_epi8(c[2 * k], c[2 * k + 1]);
    hi[k] = _mm_unpackhi_epi8(c[2 * k], c[2 * k + 1]);
  }
  for (int half = 0; half < 2; ++half) {
    const __m128i* d = half ? hi : lo;
    const __m128i e0 = _mm_unpacklo_epi16(d[0], d[1]), e1 = _mm_unpackhi_epi16(d[0], d[1]);  // cols 0-3: rows 0-3, 4-7
    const __m128i f0 = _mm_unpacklo_epi16(d[2], d[3]), f1 = _mm_unpackhi_epi16(d[2], d[3]);  // cols 4-7
    const __m128i r[4] = {_mm_unpacklo_epi32(e0, f0), _mm_unpackhi_epi32(e0, f0), _mm_unpacklo_epi32(e1, f1),
                          _mm_unpackhi_epi32(e1, f1)};  // two rows each
    uint8_t* q = p + 8 * half * stride;
    for (int k = 0; k < 4; ++k) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(q + (2 * k) * stride), r[k]);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(q + (2 * k + 1) * stride), _mm_unpackhi_epi64(r[k], r[k]));
    }
  }
}

}  // namespace

void deblock_luma_edge_sse2(uint8_t* q0, int across, int along, const uint8_t bs[4], const uint8_t tc0[4], int alpha,
                            int beta) {
  if (alpha == 0 || beta == 0) return;
  if ((bs[0] | bs[1] | bs[2] | bs[3]) == 0) return;
  const bool strong = bs[0] == 4;  // an edge is all bS 4 (intra on a macroblock edge) or all below 4
  __m128i r[8];
  if (along == 1) {  // horizontal edge: rows p3..q3, 16 samples each
    for (int k = 0; k < 8; ++k) r[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q0 + (k - 4) * across));
    filter16(r, strong, bs, tc0, alpha, beta);
    for (int k = 1; k < 7; ++k) _mm_storeu_si128(reinterpret_cast<__m128i*>(q0 + (k - 4) * across), r[k]);
  } else {  // vertical edge (across == 1): 16 rows of p3..q3
    load_transposed(q0 - 4, along, r);
    filter16(r, strong, bs, tc0, alpha, beta);
    store_transposed(q0 - 4, along, r);
  }
}

namespace {
// Sixteen chroma lines (8 of Cb, then the same 8 of Cr) in 16-bit lanes, 8 per register: r[0..3] = p1, p0, q0, q1.
void chroma16(__m128i r[4], bool strong, const uint8_t tc0[4], const uint8_t bs[4], int alpha, int beta) {
  const __m128i zero = _mm_setzero_si128();
  alignas(16) int16_t tc_line[8], en_line[8];
  for (int l = 0; l < 8; ++l) {  // chroma line l takes the bS of luma line 2l: segment l / 2
    tc_line[l] = static_cast<int16_t>(tc0[l >> 1] + 1);
    en_line[l] = static_cast<int16_t>(bs[l >> 1] ? -1 : 0);
  }
  const __m128i tc = _mm_load_si128(reinterpret_cast<const __m128i*>(tc_line));
  const __m128i enable = _mm_load_si128(reinterpret_cast<const __m128i*>(en_line));
  const __m128i a = _mm_set1_epi16(static_cast<int16_t>(alpha)), b = _mm_set1_epi16(static_cast<int16_t>(beta));
  const __m128i two = _mm_set1_epi16(2), four = _mm_set1_epi16(4);
  __m128i out0[2], out1[2];
  for (int h = 0; h < 2; ++h) {  // h = 0: Cb, 1: Cr (same lines, same bS)
    const __m128i p1 = h ? _mm_unpackhi_epi8(r[0], zero) : _mm_unpacklo_epi8(r[0], zero);
    const __m128i p0 = h ? _mm_unpackhi_epi8(r[1], zero) : _mm_unpacklo_epi8(r[1], zero);
    const __m128i q0 = h ? _mm_unpackhi_epi8(r[2], zero) : _mm_unpacklo_epi8(r[2], zero);
    const __m128i q1 = h ? _mm_unpackhi_epi8(r[3], zero) : _mm_unpacklo_epi8(r[3], zero);
    const __m128i filt = _mm_and_si128(
        _mm_and_si128(_mm_cmplt_epi16(absd(p0, q0), a), _mm_cmplt_epi16(absd(p1, p0), b)),
        _mm_and_si128(_mm_cmplt_epi16(absd(q1, q0), b), enable));
    __m128i np0, nq0;
    if (!strong) {
      __m128i delta = _mm_add_epi16(_mm_slli_epi16(_mm_sub_epi16(q0, p0), 2), _mm_sub_epi16(p1, q1));
      delta = _mm_srai_epi16(_mm_add_epi16(delta, four), 3);
      delta = _mm_max_epi16(_mm_sub_epi16(zero, tc), _mm_min_epi16(tc, delta));
      np0 = _mm_add_epi16(p0, delta);
      nq0 = _mm_sub_epi16(q0, delta);
    } else {
      np0 = _mm_srai_epi16(_mm_add_epi16(_mm_add_epi16(_mm_slli_epi16(p1, 1), p0), _mm_add_epi16(q1, two)), 2);
      nq0 = _mm_srai_epi16(_mm_add_epi16(_mm_add_epi16(_mm_slli_epi16(q1, 1), q0), _mm_add_epi16(p1, two)), 2);
    }
    out0[h] = select(filt, np0, p0);
    out1[h] = select(filt, nq0, q0);
  }
  r[1] = _mm_packus_epi16(out0[0], out0[1]);
  r[2] = _mm_packus_epi16(out1[0], out1[1]);
}
}  // namespace

void deblock_chroma_edges_sse2(uint8_t* cb, uint8_t* cr, int across, int along, const uint8_t bs[4],
                               const uint8_t tc0[4], int alpha, int beta) {
  if (alpha == 0 || beta == 0) return;
  if ((bs[0] | bs[1] | bs[2] | bs[3]) == 0) return;
  const bool strong = bs[0] == 4;
  __m128i r[4];
  if (along == 1) {  // horizontal edge: rows p1, p0, q0, q1 of 8 samples, Cb in the low half, Cr in the high
    for (int k = 0; k < 4; ++k)
      r[k] = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(cb + (k - 2) * across)),
                                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(cr + (k - 2) * across)));
    chroma16(r, strong, tc0, bs, alpha, beta);
    for (int k = 1; k < 3; ++k) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(cb + (k - 2) * across), r[k]);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(cr + (k - 2) * across), _mm_unpackhi_epi64(r[k], r[k]));
    }
    return;
  }
  // Vertical edge: 8 rows of p1 p0 q0 q1 per plane, transposed into 4 vectors of 16 lines.
  __m128i rows[16];
  for (int i = 0; i < 16; ++i) {
    const uint8_t* p = (i < 8 ? cb + i * along : cr + (i - 8) * along) - 2;
    int32_t w;
    std::memcpy(&w, p, 4);
    rows[i] = _mm_cvtsi32_si128(w);
  }
  __m128i a8[8], b4[4];
  for (int i = 0; i < 8; ++i) a8[i] = _mm_unpacklo_epi8(rows[2 * i], rows[2 * i + 1]);
  for (int j = 0; j < 4; ++j) b4[j] = _mm_unpacklo_epi16(a8[2 * j], a8[2 * j + 1]);  // rows 4j..4j+3, bytes 0-3
  const __m128i c0 = _mm_unpacklo_epi32(b4[0], b4[1]), c1 = _mm_unpackhi_epi32(b4[0], b4[1]);  // rows 0-7
  const __m128i c2 = _mm_unpacklo_epi32(b4[2], b4[3]), c3 = _mm_unpackhi_epi32(b4[2], b4[3]);  // rows 8-15
  r[0] = _mm_unpacklo_epi64(c0, c2);
  r[1] = _mm_unpackhi_epi64(c0, c2);
  r[2] = _mm_unpacklo_epi64(c1, c3);
  r[3] = _mm_unpackhi_epi64(c1, c3);
  chroma16(r, strong, tc0, bs, alpha, beta);
  const __m128i lo = _mm_unpacklo_epi8(r[1], r[2]), hi = _mm_unpackhi_epi8(r[1], r[2]);  // p0 q0 per row
  alignas(16) uint16_t pq[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(pq), lo);
  _mm_store_si128(reinterpret_cast<__m128i*>(pq + 8), hi);
  for (int i = 0; i < 16; ++i) std::memcpy((i < 8 ? cb + i * along : cr + (i - 8) * along) - 1, &pq[i], 2);
}

}  // namespace gme
#endif
